"""`arena-healthcheck`: exit 0 when this container's process is alive (Docker HEALTHCHECK).

For a pool it asks HEALTHCHECK_URL (default http://127.0.0.1:8000/healthz?check=live) with
the first name in ALLOWED_HOSTS as Host, so an ALLOWED_HOSTS without "localhost" does not
make it fail with 400. /healthz is exempt from the https redirect. `arena-healthcheck
--worker` checks instead that this container's Celery worker (`celery@<host name>`) wrote
its heartbeat (core/heartbeat.py) within WORKER_HEARTBEAT_STALE_SECONDS; `--beat`, that a
beat of the site holds the schedule's lock in Redis (settings.py). All start fast
and load no Django: a probe every few seconds costs next to nothing.
"""

from __future__ import annotations

import os
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

# live, not ready: a down worker or Redis must not take the web container out too.
DEFAULT_URL = "http://127.0.0.1:8000/healthz?check=live"


def host_header(allowed_hosts: str) -> str | None:
    for name in (h.strip() for h in allowed_hosts.split(",")):
        if name and name != "*":
            return name.lstrip(".")  # ".example.org" allows example.org itself
    return None


def worker_alive() -> int:
    import redis

    prefix = os.environ.get("CACHE_KEY_PREFIX") or "arena"
    stale = float(os.environ.get("WORKER_HEARTBEAT_STALE_SECONDS", "30"))
    key = f"{prefix}:worker-beat:celery@{socket.gethostname()}"
    try:
        client = redis.Redis.from_url(os.environ["REDIS_URL"], socket_timeout=3)
        value = client.get(key)
    except (KeyError, redis.RedisError) as exc:
        print(f"arena-healthcheck: {key}: {exc!r}", file=sys.stderr)
        return 1
    age = None if value is None else time.time() - float(value)  # type: ignore[arg-type]
    if age is None or age > stale:
        print(f"arena-healthcheck: no heartbeat of {key} within {stale:g} s", file=sys.stderr)
        return 1
    return 0


def beat_leading() -> int:
    """Some beat of the site holds the schedule's lock (celery-redbeat; settings.py)."""
    import redis

    key = f"{os.environ.get('CACHE_KEY_PREFIX') or 'arena'}:beat::lock"
    try:
        client = redis.Redis.from_url(os.environ["REDIS_URL"], socket_timeout=3)
        held = bool(client.exists(key))
    except (KeyError, redis.RedisError) as exc:
        print(f"arena-healthcheck: {key}: {exc!r}", file=sys.stderr)
        return 1
    if not held:
        print(f"arena-healthcheck: no beat holds {key}", file=sys.stderr)
    return 0 if held else 1


def main() -> int:
    if "--worker" in sys.argv[1:]:
        return worker_alive()
    if "--beat" in sys.argv[1:]:
        return beat_leading()
    url = os.environ.get("HEALTHCHECK_URL", DEFAULT_URL)
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        print(f"arena-healthcheck: {url}: not an http(s) URL", file=sys.stderr)
        return 1
    request = urllib.request.Request(url)  # noqa: S310  # http(s) only, checked above
    host = host_header(os.environ.get("ALLOWED_HOSTS", ""))
    if host:
        request.add_header("Host", host)
    try:
        # http(s) only, checked above (ruff S310 asks about file: and the like).
        with urllib.request.urlopen(request, timeout=4) as response:  # noqa: S310
            ok = response.status == 200
    except (urllib.error.URLError, OSError) as exc:
        print(f"arena-healthcheck: {url}: {exc}", file=sys.stderr)
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
