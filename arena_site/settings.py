"""Settings for the arena, read from the environment.

With nothing set the site runs on an embedded default suitable for a laptop: a SQLite
file under ./var, Celery tasks executed eagerly in-process, a local-memory cache and
DEBUG on. Setting DATABASE_URL (PostgreSQL) and REDIS_URL (broker and cache) turns it
into a real deployment; there DEBUG defaults to off and SECRET_KEY must be given.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import django_stubs_ext
import environ
from django.core.exceptions import ImproperlyConfigured

# Django's admin and form classes take type arguments (`ModelAdmin[Snapshot]`), as the
# type checker sees them, before any app module defines a subclass.
django_stubs_ext.monkeypatch()

# The site package: templates/, static/ and data/ ship inside it (and so inside the wheel),
# so a site installed from the package finds them wherever site-packages is.
BASE_DIR = Path(__file__).resolve().parent
# Where files written at run time go: next to manage.py in a source checkout, else the
# working directory (an installed site; the image sets /app). var/ holds the embedded
# SQLite file; STATIC_ROOT below defaults to staticfiles/ here.
PROJECT_DIR = BASE_DIR.parent if (BASE_DIR.parent / "manage.py").is_file() else Path.cwd()
VAR_DIR = PROJECT_DIR / "var"

env = environ.Env()

DATABASE_URL = env.str("DATABASE_URL", default="")
REDIS_URL = env.str("REDIS_URL", default="")
EMBEDDED = not DATABASE_URL

# --- Core -------------------------------------------------------------------------
DEBUG = env.bool("DEBUG", default=EMBEDDED)
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Outside DEBUG the arena refuses to start without one: "
            "export SECRET_KEY to a long random string (for example the output of "
            "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`)."
        )
    SECRET_KEY = "insecure-embedded-development-key-do-not-use-in-production"
# Rotating SECRET_KEY: the previous key(s) here keep sessions and signed values valid until
# they are dropped (docs/deployment.md, "Rotating secrets").
SECRET_KEY_FALLBACKS = env.list("SECRET_KEY_FALLBACKS", default=[])

# The key of the pseudonyms stored instead of client user ids (HMAC), and of the IP hashes
# unless IP_HASH_KEY is set. Independent of SECRET_KEY, so rotating that one never splits a
# user's history (a pseudonym made with another key is another user).
USER_ID_HMAC_KEY = env.str("USER_ID_HMAC_KEY", default="")
if not USER_ID_HMAC_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "USER_ID_HMAC_KEY is not set. It keys the pseudonyms of user ids and IP addresses, "
            "apart from SECRET_KEY so that SECRET_KEY can be rotated. A new site: set it to a "
            "long random string, like SECRET_KEY. A site upgraded from 0.1.0, where the "
            "pseudonyms were keyed by SECRET_KEY: set it to that SECRET_KEY's value, or every "
            "user's history starts again (CHANGELOG.md, 0.2.0)."
        )
    USER_ID_HMAC_KEY = "insecure-embedded-development-key-do-not-use-in-production"
# The truncated HMAC stored as a vote's ip_hash (anomaly rules, per-IP counts). May be
# rotated on its own, at the cost of per-IP history.
IP_HASH_KEY = env.str("IP_HASH_KEY", default=USER_ID_HMAC_KEY)

# Clients behind reverse proxies: X-Forwarded-For (and X-Forwarded-Proto) are believed only
# from a peer inside these networks (CIDRs; nginx on this host: 127.0.0.1/32,::1/128), and
# ignored from anyone else (core/client_ip.py). Empty: every client is its socket address.
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])
for _cidr in TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_cidr, strict=False)
    except ValueError:
        raise ImproperlyConfigured(
            f"TRUSTED_PROXIES: {_cidr!r} is not an address or network (e.g. 127.0.0.1/32)."
        ) from None
if "NUM_PROXIES" in env:
    raise ImproperlyConfigured(
        "NUM_PROXIES is no longer read: set TRUSTED_PROXIES to your proxies' addresses "
        "instead (nginx on this host: TRUSTED_PROXIES=127.0.0.1/32,::1/128), and remove "
        "NUM_PROXIES (CHANGELOG.md, 0.2.0)."
    )

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    # Ours, lowest layer first (docs/architecture.md; import-linter holds the order).
    "core",
    "catalogue",
    "ingest",
    "leaderboard",
    "external",
    "moderation",
    "serving",
    "releases",
    "evaluations",
    "contributors",
    "arena_site",
]

MIDDLEWARE = [
    # First: nothing may read X-Forwarded-Proto that a proxy we do not trust sent.
    "core.client_ip.UntrustedProxyHeadersMiddleware",
    "core.middleware.CollapseLeadingSlashesMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "core.middleware.BodySizeLimitMiddleware",
    "core.middleware.HostileUrlMiddleware",
    "core.middleware.DatabaseUnavailableMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.admin_lookups.AdminRegexLookupMiddleware",  # ?x__regex=( is a 400, not a 500
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its lockout answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "arena_site.urls"
WSGI_APPLICATION = "arena_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------
if EMBEDDED:
    VAR_DIR.mkdir(exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env.str("SQLITE_PATH", default=str(VAR_DIR / "arena.sqlite3")),
        }
    }
else:
    DATABASES = {"default": env.db_url_config(DATABASE_URL)}
    # A database that does not answer fails a request in seconds (503), never hangs it.
    _connect_timeout = env.int("DATABASE_CONNECT_TIMEOUT", default=3)
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", _connect_timeout)
    # Connections come from a psycopg pool per process (Django's `pool` option): a pairs
    # worker with a hundred threads waiting on providers holds a few connections, not one
    # per thread. Each is checked as it is taken (CONN_HEALTH_CHECKS), so connections left
    # dead by a PostgreSQL restart are replaced instead of failing requests.
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["ENGINE"] = "core.postgresql"  # its pool's check: see its base.py
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps them
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "min_size": 1,
        "max_size": env.int("DATABASE_POOL_SIZE", default=8),
        "timeout": _connect_timeout,
    }
    # A read replica (streaming, e.g. a managed database's): board reads in GET requests go
    # there, nothing else (core/db_router.py). Tests use the primary (MIRROR).
    DATABASE_REPLICA_URL = env.str("DATABASE_REPLICA_URL", default="")
    if DATABASE_REPLICA_URL:
        _replica = env.db_url_config(DATABASE_REPLICA_URL)
        _replica["OPTIONS"] = {**DATABASES["default"]["OPTIONS"], **_replica.get("OPTIONS", {})}
        _replica.update(CONN_MAX_AGE=0, CONN_HEALTH_CHECKS=True, TEST={"MIRROR": "default"})
        _replica["ENGINE"] = DATABASES["default"]["ENGINE"]
        DATABASES["replica"] = _replica
        DATABASE_ROUTERS = ["core.db_router.ReplicaRouter"]
        MIDDLEWARE.insert(
            MIDDLEWARE.index("core.middleware.DatabaseUnavailableMiddleware") + 1,
            "core.db_router.ReplicaReadsMiddleware",
        )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache and Celery -------------------------------------------------------------
# How long a task taken by a worker that died stays invisible before another worker gets it
# (the Redis transport's visibility_timeout; kombu's default is an hour).
CELERY_VISIBILITY_TIMEOUT = env.int("CELERY_VISIBILITY_TIMEOUT", default=60)
REDELIVERY_CHECK_SECONDS = env.float("REDELIVERY_CHECK_SECONDS", default=10.0)
# Redis is optional at run time (docs/reliability.md): short timeouts on every connection,
# and a per-process circuit breaker (core/redis_client.py) that stops trying for
# REDIS_BREAKER_SECONDS after a failure.
REDIS_SOCKET_TIMEOUT = env.float("REDIS_SOCKET_TIMEOUT", default=0.5)
REDIS_CONNECT_TIMEOUT = env.float("REDIS_CONNECT_TIMEOUT", default=0.5)
REDIS_BREAKER_SECONDS = env.float("REDIS_BREAKER_SECONDS", default=5.0)
if REDIS_URL:
    CACHES = {
        "default": {
            # django-redis: while Redis is unreachable a read is a miss and a write is dropped.
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default="arena"),
            "OPTIONS": {
                "SOCKET_TIMEOUT": REDIS_SOCKET_TIMEOUT,
                "SOCKET_CONNECT_TIMEOUT": REDIS_CONNECT_TIMEOUT,
                "IGNORE_EXCEPTIONS": True,
                "CONNECTION_FACTORY": "core.redis_client.ConnectionFactory",
                # JSON, not pickle: a value in Redis can never run code here.
                "SERIALIZER": "core.cache_serializer.JsonSerializer",
            },
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = False
    # Publishing a task (from a web process) gives up quickly when the broker is gone;
    # the caller then leaves the recompute to the beat schedule or the next vote.
    CELERY_TASK_PUBLISH_RETRY_POLICY = {
        "max_retries": 1,
        "interval_start": 0,
        "interval_step": 0.2,
        "interval_max": 0.2,
    }
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "socket_connect_timeout": REDIS_CONNECT_TIMEOUT,
        "socket_timeout": env.float("CELERY_BROKER_SOCKET_TIMEOUT", default=5.0),
        # A message a worker took and never acknowledged (it was killed mid-task) goes back
        # to the queue this long after it was delivered; core/redelivery.py looks every
        # REDELIVERY_CHECK_SECONDS. Every countdown the site schedules must be shorter, or a
        # waiting task is handed out twice (docs/reliability.md, "A worker killed mid-task").
        "visibility_timeout": CELERY_VISIBILITY_TIMEOUT,
    }
    CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    # With a host name: a bare "memory://" makes kombu warn on every task ("No hostname
    # was supplied. Reverting to default 'localhost'").
    CELERY_BROKER_URL = "memory://localhost/"
    CELERY_TASK_ALWAYS_EAGER = True
# Benchmarks only: measure the pages with every cache miss (benchmarks/bench_recompute.py).
ARENA_LOCAL_CACHE = env.str("ARENA_CACHE", default="") != "dummy"
if not ARENA_LOCAL_CACHE:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_QUEUE", default="arena")
# JSON only, stated rather than left to Celery's defaults: a pickled message in the queue is
# refused, never run. Beat keeps its state as JSON too (redbeat's encoder, below).
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_EVENT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_ACCEPT_CONTENT = ["json"]
# Beat: exactly one fires, however many run (one per machine, say). celery-redbeat keeps
# the schedule's state (each entry's last run, JSON) in Redis and takes a Redis lock before
# scheduling anything, renewed on every tick (at most BEAT_TICK_SECONDS apart); another beat
# waits for the lock, polling every tick, and takes over once a dead holder's lock expires
# (BEAT_LOCK_SECONDS), with the same schedule state: nothing run twice, nothing skipped. A
# holder that cannot renew (Redis gone, the lock expired) exits; its supervisor restarts it.
# A new entry's last run is "now" (Celery's rule): its first run is one interval after start.
CELERY_BEAT_SCHEDULER = "redbeat.RedBeatScheduler"
BEAT_TICK_SECONDS = env.float("BEAT_TICK_SECONDS", default=5.0)
BEAT_LOCK_SECONDS = env.int("BEAT_LOCK_SECONDS", default=30)
CELERY_BEAT_MAX_LOOP_INTERVAL = BEAT_TICK_SECONDS
CELERY_REDBEAT_REDIS_URL = REDIS_URL
CELERY_REDBEAT_KEY_PREFIX = f"{CACHES['default'].get('KEY_PREFIX') or 'arena'}:beat:"
CELERY_REDBEAT_LOCK_TIMEOUT = BEAT_LOCK_SECONDS
CELERY_REDBEAT_REDIS_OPTIONS = {
    "socket_connect_timeout": REDIS_CONNECT_TIMEOUT,
    "socket_timeout": env.float("CELERY_BROKER_SOCKET_TIMEOUT", default=5.0),
}
# An evaluation run's driver works for many minutes, longer than CELERY_VISIBILITY_TIMEOUT:
# acknowledged on receipt, so it is not handed out again while it runs. A driver that dies
# is resumed from its heartbeat by evaluations.tasks.resume_evaluations instead.
CELERY_TASK_ANNOTATIONS = {"evaluations.tasks.run_evaluation": {"acks_late": False}}
# Keep retrying the broker while a worker starts (and say so: Celery 5 warns otherwise).
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# --- Auth, i18n, static -----------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes first: it refuses a locked-out login before the password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(PROJECT_DIR / "staticfiles")))
# arena_site/static/ is found as the site app's own static folder; plotly.js is a vendored
# partial bundle in it (static/vendor/plotly/, see its VERSION): no CDN.
STATICFILES_DIRS: list[str] = []
STORAGES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    # Dataset releases; filled in below, after their settings.
}

# Hashed names (cached for a year, `immutable`) and gzip/brotli copies made by collectstatic;
# WhiteNoise serves them from STATIC_ROOT in every process, behind nginx or not
# (docs/deployment.md, "Static files"). Tests swap in the plain storage (tests/conftest.py).

# --- Behind a reverse proxy, over TLS (docs/deployment.md, "Settings") -------------------
# HTTPS=1: browsers reach the site over https (TLS ends at the proxy). It turns on the
# redirect to https, HSTS and secure cookies. Off by default, so plain-http runs (a laptop,
# docker compose on localhost, the benchmarks) work; `check --deploy` warns while it is off.
HTTPS = env.bool("HTTPS", default=False)
# Whether a request came over https is told by the proxy's X-Forwarded-Proto. Read by
# default once TRUSTED_PROXIES names a proxy (the shipped nginx.conf overwrites the header),
# and only from those proxies (core.client_ip.UntrustedProxyHeadersMiddleware drops it from
# anyone else); set SECURE_PROXY_SSL_HEADER="" to ignore it, or another header name.
_ssl_header = env.str(
    "SECURE_PROXY_SSL_HEADER", default="X-Forwarded-Proto" if TRUSTED_PROXIES else ""
)
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _ssl_header.upper().replace("-", "_"), "https") if _ssl_header else None
)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=HTTPS)
# Probes talk to the app directly over http: never redirect them.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=HTTPS)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

# --- REST framework ---------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.auth.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_RENDERER_CLASSES": ["core.renderers.SafeJSONRenderer"]
    + (["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
    "DEFAULT_PARSER_CLASSES": ["core.parsers.SafeJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.errors.api_exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Code Completion Arena API",
    "DESCRIPTION": (
        "Battle ingest for editor extensions (native v1 API and the public Copilot Arena "
        "extension's routes) and the public leaderboard read API."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Docs assets from our own static files: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Without deep links an operation's path is text, not a link inside its toggle button
    # (a control nested in a control, which screen readers cannot reach).
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    # Every operation lists the plumbing's error answers (core/schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.schema.add_common_responses",
    ],
}

# --- Arena ------------------------------------------------------------------------
# Anonymous posting: the public extension sends no credentials.
ARENA_ALLOW_ANONYMOUS = env.bool("ARENA_ALLOW_ANONYMOUS", default=True)
# Anonymous clients are limited per IP and per (pseudonymised) user id; API keys lift both
# and may carry a per-key limit of their own. Rates are "<count>/<sec|min|hour|day>".
ARENA_THROTTLE_RATES = {
    "vote_ip": env.str("THROTTLE_VOTE_IP", default="600/min"),
    "vote_user": env.str("THROTTLE_VOTE_USER", default="120/min"),
    # Shown completions are logged twice per pair and at the pace of typing: their own scope.
    "completion_ip": env.str("THROTTLE_COMPLETION_IP", default="1200/min"),
    "completion_user": env.str("THROTTLE_COMPLETION_USER", default="600/min"),
    "account_ip": env.str("THROTTLE_ACCOUNT_IP", default="60/hour"),
    "pair_ip": env.str("THROTTLE_PAIR_IP", default="300/min"),
    "pair_user": env.str("THROTTLE_PAIR_USER", default="300/min"),
    "read_ip": env.str("THROTTLE_READ_IP", default="1200/min"),
}
# Size limits (documented in docs/api.md). A body over its route's limit gets 413.
ARENA_MAX_CODE_CHARS = env.int("ARENA_MAX_CODE_CHARS", default=200_000)
# The body limit of a single vote or pair request follows from the field limits, so a vote
# whose every field is within its limit is never a 413: the largest vote (an edit outcome:
# two items of six code fields) with every code field full of characters JSON writes as
# six bytes (\u0001), plus room for everything else (tests/core/test_middleware.py).
VOTE_CODE_FIELDS = 12
JSON_BYTES_PER_CHAR = 6
ARENA_MAX_BODY_BYTES = env.int(
    "ARENA_MAX_BODY_BYTES",
    default=VOTE_CODE_FIELDS * ARENA_MAX_CODE_CHARS * JSON_BYTES_PER_CHAR + 256 * 1024,
)
ARENA_MAX_BATCH_BODY_BYTES = env.int(
    "ARENA_MAX_BATCH_BODY_BYTES", default=max(32 * 1024 * 1024, ARENA_MAX_BODY_BYTES)
)
ARENA_MAX_BATCH = env.int("ARENA_MAX_BATCH", default=500)
ARENA_MAX_LATENCY_MS = env.float("ARENA_MAX_LATENCY_MS", default=120_000.0)
DATA_UPLOAD_MAX_MEMORY_SIZE = ARENA_MAX_BATCH_BODY_BYTES
# Deeper JSON bodies get 400 (votes are at most four levels deep; core/parsers.py).
ARENA_MAX_JSON_DEPTH = env.int("ARENA_MAX_JSON_DEPTH", default=32)
# Retry-After of the 503 answered while the database is down (core/errors.py).
ARENA_RETRY_AFTER_SECONDS = env.int("ARENA_RETRY_AFTER_SECONDS", default=5)
# Public reads (board pages, read API; leaderboard/http_cache.py): how long browsers and a
# CDN may reuse a response without asking (max-age), and how long after that a cache may
# still serve it while it revalidates in the background (stale-while-revalidate; 0 = omit).
ARENA_READ_MAX_AGE = env.int("ARENA_READ_MAX_AGE", default=30)
ARENA_READ_STALE_WHILE_REVALIDATE = env.int("ARENA_READ_STALE_WHILE_REVALIDATE", default=300)

# Personal leaderboards (`/user_scores`, contributor pages): nothing below this many of the
# user's own counted votes, then one score list per PERSONAL_HISTORY_INTERVAL votes.
PERSONAL_MIN_VOTES = env.int("PERSONAL_MIN_VOTES", default=20)
# Served latency on the board (leaderboard/latency.py): completions of the last N days, and
# the fewest a model needs for its median and p90 to be shown.
ARENA_LATENCY_WINDOW_DAYS = env.int("ARENA_LATENCY_WINDOW_DAYS", default=30)
ARENA_LATENCY_MIN_SAMPLES = env.int("ARENA_LATENCY_MIN_SAMPLES", default=5)
# The "new" badge (leaderboard/new_models.py): models first rated within this many days
# before the published board was published.
ARENA_NEW_MODEL_DAYS = env.int("ARENA_NEW_MODEL_DAYS", default=14)
# The compare page's per-slice head to head (leaderboard/compare_slices.py): a slice value
# is shown when the two models fought at least this many battles in it.
ARENA_COMPARE_MIN_VOTES = env.int("ARENA_COMPARE_MIN_VOTES", default=10)
# Ignored pairs on the model page (leaderboard/ignored_pairs.py): a shown pair with no vote
# within this many minutes counts as ignored.
ARENA_IGNORED_WINDOW_MINUTES = env.int("ARENA_IGNORED_WINDOW_MINUTES", default=60)
# The controlled board (leaderboard/controlled.py) reads one row per battle: at most the
# N most recently stored non-excluded battles, so the recompute's cost stays bounded
# (0 = no controlled board).
ARENA_CONTROLLED_MAX_BATTLES = env.int("ARENA_CONTROLLED_MAX_BATTLES", default=200_000)
# ...and a controlled fit younger than this is reused by the next recomputes (0 = refit on
# every recompute; `recompute_leaderboard --full` always refits).
ARENA_CONTROLLED_REFIT_SECONDS = env.int("ARENA_CONTROLLED_REFIT_SECONDS", default=900)
# ...and its decision whether context-length interactions enter the fit (a held-out
# comparison costing six refits) is reused this long (0 = decide on every controlled fit).
ARENA_CONTROLLED_CONTEXT_RESELECT_SECONDS = env.int(
    "ARENA_CONTROLLED_CONTEXT_RESELECT_SECONDS", default=86400
)
# PostgreSQL's work_mem inside the count refresh and the reads of the per-user counts
# (leaderboard/incremental.py; one refresh runs at a time): the server's default 4MB spills
# their groupings of millions of rows to disk.
ARENA_AGGREGATION_WORK_MEM = env.str("ARENA_AGGREGATION_WORK_MEM", default="256MB")
# User-clustered intervals on an arena with more users than this resample them in this many
# fixed groups of users (by their key): the cost stays bounded as users grow, and the
# intervals stay valid (docs/ratings.md, "Users in groups").
ARENA_MAX_USER_CLUSTERS = env.int("ARENA_MAX_USER_CLUSTERS", default=4096)
PERSONAL_HISTORY_INTERVAL = env.int("PERSONAL_HISTORY_INTERVAL", default=20)

# Open data releases (releases/, docs/data.md). Files go to the "releases" storage: a
# directory the web server serves at ARENA_RELEASES_URL (deploy/nginx.conf), or an object
# store when ARENA_RELEASES_STORAGE names another Django storage backend (its options as
# JSON in ARENA_RELEASES_STORAGE_OPTIONS). Django lists the files; it never streams them.
ARENA_RELEASES_ROOT = Path(env.str("ARENA_RELEASES_ROOT", default=str(VAR_DIR / "releases")))
ARENA_RELEASES_URL = env.str("ARENA_RELEASES_URL", default="/data/files/")
ARENA_RELEASES_STORAGE = env.str(
    "ARENA_RELEASES_STORAGE", default="django.core.files.storage.FileSystemStorage"
)
ARENA_RELEASES_STORAGE_OPTIONS = env.json("ARENA_RELEASES_STORAGE_OPTIONS", default={})
# Only battles older than this many days go into a release (release_dataset --min-age-days).
ARENA_RELEASE_MIN_AGE_DAYS = env.int("ARENA_RELEASE_MIN_AGE_DAYS", default=30)
# The licence a release's card names unless the operator gives another (an SPDX-style id).
ARENA_RELEASE_LICENSE = env.str("ARENA_RELEASE_LICENSE", default="cc-by-4.0")
STORAGES["releases"] = {
    "BACKEND": ARENA_RELEASES_STORAGE,
    "OPTIONS": ARENA_RELEASES_STORAGE_OPTIONS
    or (
        {"location": str(ARENA_RELEASES_ROOT), "base_url": ARENA_RELEASES_URL}
        if ARENA_RELEASES_STORAGE.endswith("FileSystemStorage")
        else {}
    ),
}

# Leaderboard recompute: after new votes (debounced) and on a beat schedule.
RECOMPUTE_ON_VOTES = env.bool("RECOMPUTE_ON_VOTES", default=True)
RECOMPUTE_DEBOUNCE_SECONDS = env.int("RECOMPUTE_DEBOUNCE_SECONDS", default=30)
RECOMPUTE_INTERVAL_SECONDS = env.int("RECOMPUTE_INTERVAL_SECONDS", default=900)
# Admin changes to what the board counts (hide, exclude, merge...) schedule a recompute this
# many seconds later (leaderboard/board_changes.py); at most RECOMPUTE_DEBOUNCE_SECONDS.
RECOMPUTE_ON_MODERATION = env.bool("RECOMPUTE_ON_MODERATION", default=True)
RECOMPUTE_MODERATION_DEBOUNCE_SECONDS = env.int("RECOMPUTE_MODERATION_DEBOUNCE_SECONDS", default=10)
# The recompute lock is a lease of this many seconds, renewed every third of it while the
# run is alive: a killed run's lock is gone within it (core/locks.py).
RECOMPUTE_LOCK_SECONDS = env.int("RECOMPUTE_LOCK_SECONDS", default=30)
# The worker writes a heartbeat every WORKER_HEARTBEAT_SECONDS; /healthz calls it down when
# the newest is older than WORKER_HEARTBEAT_STALE_SECONDS (core/heartbeat.py).
WORKER_HEARTBEAT_SECONDS = env.float("WORKER_HEARTBEAT_SECONDS", default=5.0)
WORKER_HEARTBEAT_STALE_SECONDS = env.float("WORKER_HEARTBEAT_STALE_SECONDS", default=30.0)
# Snapshots older than this many days are thinned to the last one of each day (history).
SNAPSHOT_KEEP_ALL_DAYS = env.int("SNAPSHOT_KEEP_ALL_DAYS", default=2)
# Pair serving (README "Serving completion pairs"): one pair's time budget including
# substitutes, latency refits.
SERVING_PAIR_DEADLINE_SECONDS = env.float("SERVING_PAIR_DEADLINE_SECONDS", default=15.0)
SERVING_SUBSTITUTE_MIN_SECONDS = env.float("SERVING_SUBSTITUTE_MIN_SECONDS", default=1.0)
SERVING_MAX_OUTPUT_TOKENS = env.int("SERVING_MAX_OUTPUT_TOKENS", default=1024)
SERVING_FIT_INTERVAL_SECONDS = env.int("SERVING_FIT_INTERVAL_SECONDS", default=300)
# A provider's max_concurrency holds across every pairs process sharing the Redis, not per
# process (serving/cluster_limit.py); 0: per process only.
SERVING_CLUSTER_LIMITS = env.bool("SERVING_CLUSTER_LIMITS", default=True)
# Slice fits of a recompute shared with idle workers (leaderboard/fanout.py); a worker's
# claim on a slice lapses after this many seconds without a result (it died).
RECOMPUTE_FAN_OUT = env.bool("RECOMPUTE_FAN_OUT", default=True)
RECOMPUTE_SLICE_CLAIM_SECONDS = env.int("RECOMPUTE_SLICE_CLAIM_SECONDS", default=120)

CELERY_BEAT_SCHEDULE = {
    "recompute-leaderboard": {
        "task": "leaderboard.tasks.recompute_leaderboard",
        "schedule": float(RECOMPUTE_INTERVAL_SECONDS),
        "kwargs": {"trigger": "beat"},
    },
    "fit-latencies": {
        "task": "serving.tasks.fit_latencies",
        "schedule": float(SERVING_FIT_INTERVAL_SECONDS),
    },
    "resume-evaluations": {
        "task": "evaluations.tasks.resume_evaluations",
        "schedule": float(env.int("EVALUATION_RESUME_INTERVAL_SECONDS", default=120)),
    },
    # The maintained per-day battle counts checked against a full count (leaderboard/incremental.py).
    "reconcile-counts": {
        "task": "leaderboard.tasks.reconcile_counts",
        "schedule": float(env.int("RECONCILE_INTERVAL_SECONDS", default=24 * 3600)),
    },
    "detect-anomalies": {
        "task": "moderation.tasks.detect_anomalies",
        "schedule": float(env.int("ANOMALY_INTERVAL_SECONDS", default=3600)),
    },
}

# Offline evaluations (docs/evaluations.md). Threads per run driver; calls in flight per
# provider across all workers (a Redis semaphore; also capped by the provider's own
# max_concurrency); one call's limit; an item's lease (a driver renews it every third of it;
# a run whose driver stopped renewing for this long is resumed by the next worker).
EVALUATION_CONCURRENCY = env.int("EVALUATION_CONCURRENCY", default=4)
EVALUATION_PROVIDER_CONCURRENCY = env.int("EVALUATION_PROVIDER_CONCURRENCY", default=4)
EVALUATION_CALL_TIMEOUT_SECONDS = env.float("EVALUATION_CALL_TIMEOUT_SECONDS", default=120.0)
EVALUATION_LEASE_SECONDS = env.float("EVALUATION_LEASE_SECONDS", default=60.0)
EVALUATION_MAX_ATTEMPTS = env.int("EVALUATION_MAX_ATTEMPTS", default=3)
# The sandbox (evaluations/sandbox.py): bwrap (bubblewrap; runs are refused without it) or
# none (the operator's explicit opt-out: programs run unconfined), the binary, and limits.
EVALUATION_SANDBOX_ISOLATION = env.str("EVALUATION_SANDBOX_ISOLATION", default="bwrap")
if EVALUATION_SANDBOX_ISOLATION not in ("bwrap", "none"):
    raise ImproperlyConfigured(
        f"EVALUATION_SANDBOX_ISOLATION={EVALUATION_SANDBOX_ISOLATION!r}: use bwrap (the default) "
        "or none (untrusted programs run without isolation)"
    )
EVALUATION_SANDBOX_BWRAP = env.str("EVALUATION_SANDBOX_BWRAP", default="bwrap")
EVALUATION_SANDBOX_CPU_SECONDS = env.int("EVALUATION_SANDBOX_CPU_SECONDS", default=10)
EVALUATION_SANDBOX_WALL_SECONDS = env.float("EVALUATION_SANDBOX_WALL_SECONDS", default=20.0)
EVALUATION_SANDBOX_MEMORY_MB = env.int("EVALUATION_SANDBOX_MEMORY_MB", default=1024)
# Making a model public when its latest fill-in-the-middle check (on EVALUATION_GUARD_SET)
# found fewer well-formatted answers than this share: a warning, or refused when BLOCK is on.
EVALUATION_MIN_WELL_FORMATTED = env.float("EVALUATION_MIN_WELL_FORMATTED", default=0.5)
EVALUATION_BLOCK_PUBLIC = env.bool("EVALUATION_BLOCK_PUBLIC", default=False)
EVALUATION_GUARD_SET = env.str("EVALUATION_GUARD_SET", default="random-span-light")

# Anomaly reports (moderation/anomalies.py documents each rule). A flagged subject's votes
# of the window are held out of the public board pending review (ANOMALY_HOLD, on by
# default; a moderator releases or excludes them); nothing is excluded for good
# automatically unless ANOMALY_AUTO_EXCLUDE is on.
ANOMALY_WINDOW_DAYS = env.int("ANOMALY_WINDOW_DAYS", default=30)
ANOMALY_DAILY_CAP = env.int("ANOMALY_DAILY_CAP", default=200)
ANOMALY_TOP_SLOT_MIN_VOTES = env.int("ANOMALY_TOP_SLOT_MIN_VOTES", default=20)
ANOMALY_TOP_SLOT_SHARE = env.float("ANOMALY_TOP_SLOT_SHARE", default=0.95)
ANOMALY_OUTLIER_MIN_VOTES = env.int("ANOMALY_OUTLIER_MIN_VOTES", default=5)
ANOMALY_OUTLIER_THRESHOLD = env.float("ANOMALY_OUTLIER_THRESHOLD", default=20.0)
ANOMALY_IP_BURST_VOTES = env.int("ANOMALY_IP_BURST_VOTES", default=60)
ANOMALY_MIN_VOTE_GAP_SECONDS = env.float("ANOMALY_MIN_VOTE_GAP_SECONDS", default=2.0)
ANOMALY_MIN_LATENCY_MS = env.float("ANOMALY_MIN_LATENCY_MS", default=20.0)
# Rigging rules presence and affinity (analysis/rigging_scores.py): z-scores at which an
# account with at least RIGGING_MIN_VOTES recent votes is flagged; the defaults are the ones the
# rigging simulation measured (docs/ratings.md, "Vote rigging").
ANOMALY_PRESENCE_Z = env.float("ANOMALY_PRESENCE_Z", default=4.5)
ANOMALY_AFFINITY_Z = env.float("ANOMALY_AFFINITY_Z", default=4.5)
ANOMALY_RIGGING_MIN_VOTES = env.int("ANOMALY_RIGGING_MIN_VOTES", default=10)
ANOMALY_AUTO_EXCLUDE = env.bool("ANOMALY_AUTO_EXCLUDE", default=False)
ANOMALY_HOLD = env.bool("ANOMALY_HOLD", default=True)
# Votes bound to served pairs (ingest/binding.py): "auto" binds votes without an API key
# while this server serves pairs (an enabled model provider); "on" always, "off" never.
VOTE_BINDING = env.str("VOTE_BINDING", default="auto")
if VOTE_BINDING not in ("auto", "on", "off"):
    raise ImproperlyConfigured(f"VOTE_BINDING must be auto, on or off, not {VOTE_BINDING!r}.")

# Logs: one line per record on stderr, "plain" text or "json" (one object per line, for a
# log shipper; arena_site/log_format.py). Celery's worker logs through the same handler.
LOG_FORMAT = env.str("LOG_FORMAT", default="plain")
if LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be 'plain' or 'json', not {LOG_FORMAT!r}.")

# --- Hardening (docs/reliability.md) ----------------------------------------------
# Content-Security-Policy (django-csp): scripts only from our own static files (no inline
# script anywhere; chart data travels as JSON data blocks). Styles allow 'unsafe-inline'
# because plotly.js injects its own <style> element and style attributes when it draws.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "worker-src": ["'self'", "blob:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
# Admin login lockout (django-axes): after AXES_FAILURE_LIMIT failed logins for one user
# name from one client IP, that pair is refused for AXES_COOLOFF_HOURS.
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_HOURS", default=1.0)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# The same client address as the throttles and the stored ip_hash (TRUSTED_PROXIES).
AXES_CLIENT_IP_CALLABLE = "core.client_ip.client_ip"
AXES_ENABLED = env.bool("AXES_ENABLED", default=True)
AXES_VERBOSE = False  # no start-up banner in every command's output

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "arena_site.log_format.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # Embedded mode runs tasks inside manage.py: keep Celery's per-task lines out of
        # the commands' output.
        **({"celery": {"level": "WARNING"}} if EMBEDDED else {}),
    },
}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# --- Operations -------------------------------------------------------------------
# /metrics (Prometheus text format; arena_site/metrics.py) answers these client addresses
# (CIDRs, via core.client_ip) or a request carrying `Authorization: Bearer METRICS_TOKEN`.
METRICS_ALLOWED_IPS = env.list("METRICS_ALLOWED_IPS", default=["127.0.0.1/32", "::1/128"])
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")

# Errors to Sentry when SENTRY_DSN is set, with code and user ids scrubbed (arena_site/sentry.py).
SENTRY_DSN = env.str("SENTRY_DSN", default="")
if SENTRY_DSN:
    from arena_site.sentry import init_sentry

    init_sentry(
        dsn=SENTRY_DSN,
        environment=env.str("SENTRY_ENVIRONMENT", default="production"),
        traces_sample_rate=env.float("SENTRY_TRACES_SAMPLE_RATE", default=0.0),
    )
