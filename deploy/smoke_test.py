"""The deployment smoke test: the steps of the Dockerfile and docs/deployment.md, without Docker.

    .venv/bin/python deploy/smoke_test.py          (or `make smoke`; `.ci/run` runs it)

1. copies the checkout's files to a temporary directory, builds the wheel there and checks
   it holds every app, template, static and data file (deploy/check_wheel.py);
2. installs the wheel into a fresh virtualenv outside the checkout and, from a directory
   that is not the checkout, runs migrate on a fresh PostgreSQL database
   (arena_smoke_<random>), collectstatic, `check --deploy --fail-level WARNING` with the
   documented production settings, load_demo;
3. starts gunicorn for the site and for the pairs pool, a Celery worker and beat, a stub
   LLM provider, and nginx with deploy/nginx.conf (private ports, a throw-away TLS
   certificate), then checks through nginx (deploy/smoke_checks.py);
4. backs up and restores: export_battles -> import_battles on a second fresh database, and
   pg_dump -> pg_restore on a third, comparing battles, pair ids and outcomes.

Everything it starts it stops, and it drops its databases and its Redis keys (it uses the
Redis database of REDIS_URL, default redis://127.0.0.1:6379/7, under a key prefix and a
Celery queue of its own). --keep leaves the directory (logs) behind.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import smoke_checks as checks
from smoke_stack import (
    HOST,
    Ports,
    Stack,
    nginx_main_conf,
    render_nginx,
    self_signed_cert,
    wait_for,
)

ROOT = Path(__file__).resolve().parents[1]
VOTE_LIMIT = 8  # THROTTLE_VOTE_IP for the run: small, so the throttle check is quick


def run(argv: list[str], *, env: dict | None = None, cwd: Path | None = None,
        quiet: bool = False) -> str:  # fmt: skip
    result = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(
            f"smoke: {' '.join(argv[:4])} failed ({result.returncode}):\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    if not quiet and result.stdout.strip():
        print(result.stdout.rstrip())
    return result.stdout


def last_json(output: str):
    """The JSON a `manage.py shell -c` script printed last (anything before is log output)."""
    return json.loads(output.strip().splitlines()[-1])


def db_url(base: str, name: str) -> str:
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", "", ""))


def build_wheel(work: Path, r: checks.Results) -> Path:
    src, dist = work / "src", work / "dist"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(src)])
    wheel = next(dist.glob("code_arena-*.whl"))
    run([sys.executable, str(ROOT / "deploy" / "check_wheel.py"), str(wheel)])
    r.ok(
        f"wheel built in a temporary copy ({wheel.name}) holds every app, template, static, data file"
    )
    return wheel


def world_usable(path: Path) -> bool:
    """Whether an unprivileged user may run this file (every directory above it searchable)."""
    real = path.resolve()
    return os.access(real, os.X_OK) and all(
        d.stat().st_mode & 0o001 for d in real.parents
    ) and bool(real.stat().st_mode & 0o005)  # fmt: skip


def base_python() -> str:
    """Debian's python3 (what docs/deployment.md uses) if it is 3.11+, else this one."""
    system = Path("/usr/bin/python3")
    if system.exists():
        version = subprocess.run([str(system), "-c", "import sys, venv; print(sys.version_info >= (3, 11))"],
                                 capture_output=True, text=True).stdout.strip()  # fmt: skip
        if version == "True":
            return str(system)
    return sys.executable


def install(wheel: Path, work: Path, r: checks.Results) -> Path:
    venv = work / "venv"
    run([base_python(), "-m", "venv", str(venv)])
    run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", str(wheel)]
    )
    where = run([str(venv / "bin" / "python"), "-c", "import arena_site; print(arena_site.__file__)"],
                cwd=work / "site", quiet=True).strip()  # fmt: skip
    checks.expect(where.startswith(str(venv)) and not where.startswith(str(ROOT)),
                  "the site imports from the fresh venv, not the checkout", where)  # fmt: skip
    r.ok(f"installed into a fresh venv ({base_python()}) outside the checkout; "
         "runs from a directory outside it")  # fmt: skip
    return venv


def admin_sql(venv: Path, server: str, sql: str) -> None:
    code = (
        "import sys, psycopg\n"
        "with psycopg.connect(sys.argv[1], autocommit=True) as c: c.execute(sys.argv[2])"
    )
    run([str(venv / "bin" / "python"), "-c", code, db_url(server, "postgres"), sql])


def production_env(*, work: Path, database: str, redis_url: str, ports: Ports,
                   tag: str) -> dict[str, str]:  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")}
    env.update(
        DATABASE_URL=database,
        REDIS_URL=redis_url,
        SECRET_KEY=secrets.token_urlsafe(50),
        USER_ID_HMAC_KEY=secrets.token_urlsafe(50),
        DEBUG="0",
        ALLOWED_HOSTS=HOST,
        CSRF_TRUSTED_ORIGINS=f"https://{HOST}:{ports.https}",
        TRUSTED_PROXIES="127.0.0.1/32,::1/128",
        HTTPS="1",
        SECURE_HSTS_INCLUDE_SUBDOMAINS="1",
        SECURE_HSTS_PRELOAD="1",
        STATIC_ROOT=str(work / "site" / "staticfiles"),
        PROMETHEUS_MULTIPROC_DIR=str(work / "metrics"),
        LOG_FORMAT="json",
        CACHE_KEY_PREFIX=f"arena-smoke-{tag}",
        CELERY_QUEUE=f"arena-smoke-{tag}",
        THROTTLE_VOTE_IP=f"{VOTE_LIMIT}/hour",
        RECOMPUTE_DEBOUNCE_SECONDS="1",
        RECOMPUTE_INTERVAL_SECONDS="20",
    )
    return env


SETUP = """
import json
from django.contrib.auth import get_user_model
from catalogue.models import ArenaModel
from core.services import issue_api_key
from serving.models import ModelProvider
User = get_user_model()
User.objects.create_superuser("smoke-admin", "smoke@example.org", "{password}")
chat = list(ArenaModel.objects.filter(style="chat").order_by("key")[:2])
for i, m in enumerate(chat):
    ModelProvider.objects.create(model=m, kind="openai_chat", base_url="{stub}",
                                 remote_model=f"stub-{{i}}", api_key_env="")
_, key = issue_api_key(name="smoke")
print(json.dumps({{"api_key": key, "models": [m.key for m in chat]}}))
"""


def prepare_site(manage: list[str], env: dict, site: Path, ports: Ports, password: str,
                 r: checks.Results) -> tuple[dict, str]:  # fmt: skip
    run([*manage, "migrate", "--noinput", "-v0"], env=env, cwd=site)
    run([*manage, "collectstatic", "--noinput", "-v0"], env=env, cwd=site)
    checks.expect(any((site / "staticfiles").rglob("*.br")), "collectstatic wrote .br files")
    r.ok("migrate on a fresh PostgreSQL database; collectstatic (hashed, .gz and .br)")
    deploy = subprocess.run([*manage, "check", "--deploy", "--fail-level", "WARNING"],
                            env=env, cwd=site, capture_output=True, text=True)  # fmt: skip
    checks.expect(deploy.returncode == 0, "check --deploy passes with no warning",
                  deploy.stdout + deploy.stderr)  # fmt: skip
    report = (deploy.stdout + deploy.stderr).strip().splitlines()[-1]
    r.ok(f"check --deploy --fail-level WARNING: {report}")
    run([*manage, "load_demo", "--simulated", "3000"], env=env, cwd=site, quiet=True)
    r.ok("load_demo from the installed package (its data files): catalogue, sample, board")
    setup = SETUP.format(password=password, stub=f"http://127.0.0.1:{ports.stub}/v1")
    made = last_json(run([*manage, "shell", "-c", setup], env=env, cwd=site, quiet=True))
    return made, report


def start_stack(stack: Stack, venv: Path, env: dict, work: Path, ports: Ports) -> Path:
    site, bin_ = work / "site", venv / "bin"
    stack.may_drop = world_usable(bin_ / "python")
    if os.geteuid() == 0 and not stack.may_drop:
        print("smoke: the venv's interpreter is not usable by nobody: the site runs as root")
    stack.start("stub", [sys.executable, str(ROOT / "tests" / "serving" / "stub_provider.py"),
                         "--port", str(ports.stub), "--latency", "0.05"], env=env, cwd=site)  # fmt: skip
    # The site's processes run unprivileged (as nobody under a root CI): they may write
    # only the metrics directory and beat's schedule.
    for writable in (work / "metrics", work / "run"):
        writable.mkdir(exist_ok=True)
        writable.chmod(0o777)
    gunicorn = [str(bin_ / "gunicorn"), "-c", "python:arena_site.gunicorn_conf"]
    stack.start("web", [*gunicorn, "--bind", f"127.0.0.1:{ports.web}", "--workers", "2",
                        "--preload", "--access-logfile", "-"], env=env, cwd=site,
                unprivileged=True)  # fmt: skip
    stack.start("pairs", [*gunicorn, "--bind", f"127.0.0.1:{ports.pairs}", "--worker-class",
                          "gthread", "--workers", "1", "--threads", "16", "--access-logfile",
                          "-"], env={**env, "ARENA_PRELOAD_LABELS": "0"}, cwd=site,
                unprivileged=True)  # fmt: skip
    celery = [str(bin_ / "celery"), "-A", "arena_site"]
    stack.start("worker", [*celery, "worker", "--concurrency", "1", "--loglevel", "INFO"],
                env=env, cwd=site, unprivileged=True)  # fmt: skip
    stack.start("beat", [*celery, "beat", "--loglevel", "INFO", "--schedule",
                         str(work / "run" / "beat-schedule")], env=env, cwd=site,
                unprivileged=True)  # fmt: skip
    prefix = work / "nginx"
    prefix.mkdir()
    cert, key = self_signed_cert(prefix)
    site_conf = prefix / "arena.conf"
    site_conf.write_text(render_nginx((ROOT / "deploy" / "nginx.conf").read_text(),
                                      ports=ports, cert=cert, key=key, logs=stack.logs))  # fmt: skip
    main_conf = prefix / "nginx.conf"
    main_conf.write_text(nginx_main_conf(prefix, site_conf, stack.logs))
    run(["nginx", "-t", "-q", "-p", str(prefix), "-c", str(main_conf)])
    stack.start("nginx", ["nginx", "-p", str(prefix), "-c", str(main_conf)], env=env, cwd=prefix)
    return cert


def exported(manage: list[str], env: dict, site: Path, database: str, out: Path) -> list[dict]:
    run([*manage, "export_battles", "-o", str(out)], env={**env, "DATABASE_URL": database},
        cwd=site, quiet=True)  # fmt: skip
    return sorted((json.loads(x) for x in out.read_text().splitlines()), key=lambda b: b["pair_id"])


def backups(manage: list[str], env: dict, work: Path, venv: Path, server: str, dbs: list[str],
            r: checks.Results) -> None:  # fmt: skip
    site, main = work / "site", env["DATABASE_URL"]
    before = exported(manage, env, site, main, work / "export-1.jsonl")
    # Moderation's `excluded` flag is exported but not imported: pg_dump is the backup that
    # keeps everything (docs/deployment.md, "Backups").
    key = ("pair_id", "outcome", "model_a", "model_b", "user_hash", "kind", "source")

    def same(after: list[dict]) -> bool:
        return [tuple(b[k] for k in key) for b in after] == [
            tuple(b[k] for k in key) for b in before
        ]

    restore = db_url(server, dbs[1])
    admin_sql(venv, server, f'CREATE DATABASE "{dbs[1]}"')
    fresh = {**env, "DATABASE_URL": restore}
    run([*manage, "migrate", "--noinput", "-v0"], env=fresh, cwd=site)
    run([*manage, "import_battles", str(work / "export-1.jsonl"), "--add-unknown-models"],
        env=fresh, cwd=site, quiet=True)  # fmt: skip
    after = exported(manage, env, site, restore, work / "export-2.jsonl")
    checks.expect(len(after) == len(before) and same(after),
                  "export -> import on a fresh database keeps every battle", (len(before), len(after)))  # fmt: skip
    r.ok(f"export_battles -> import_battles --add-unknown-models on a fresh database: "
         f"{len(before):,} battles, pair ids, outcomes and models identical")  # fmt: skip

    dump, target = work / "arena.dump", dbs[2]
    parts = urlsplit(main)
    pg = [
        "-h",
        parts.hostname or "127.0.0.1",
        "-p",
        str(parts.port or 5432),
        "-U",
        parts.username or "postgres",
    ]
    run(
        [
            "pg_dump",
            *pg,
            "--format=custom",
            "--no-owner",
            "-f",
            str(dump),
            "-d",
            parts.path.lstrip("/"),
        ]
    )
    admin_sql(venv, server, f'CREATE DATABASE "{target}"')
    run(["pg_restore", *pg, "--no-owner", "-d", target, str(dump)])
    restored = exported(manage, env, site, db_url(server, target), work / "export-3.jsonl")
    checks.expect(same(restored), "pg_dump -> pg_restore keeps every battle", len(restored))
    r.ok(
        f"pg_dump --format=custom -> pg_restore into a new database: {len(restored):,} battles identical"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    args = parser.parse_args()
    started = time.monotonic()
    server = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres"
    redis_url = os.environ.get("SMOKE_REDIS_URL", "redis://127.0.0.1:6379/7")
    tag = secrets.token_hex(4)
    dbs = [f"arena_smoke_{tag}", f"arena_smoke_{tag}_restore", f"arena_smoke_{tag}_pgrestore"]
    work = Path(tempfile.mkdtemp(prefix="arena-smoke-"))
    work.chmod(0o755)  # nginx's workers (nobody) read below it
    for sub in ("site", "logs", "metrics"):
        (work / sub).mkdir()
    checks.expect(ROOT not in (work / "site").parents, "the site directory is outside the checkout")
    r, ports, stack = checks.Results(), Ports(), Stack(work / "logs")
    venv: Path | None = None
    env: dict[str, str] = {}
    try:
        venv = install(build_wheel(work, r), work, r)
        env = production_env(work=work, database=db_url(server, dbs[0]), redis_url=redis_url,
                             ports=ports, tag=tag)  # fmt: skip
        admin_sql(venv, server, f'CREATE DATABASE "{dbs[0]}"')
        manage, site = [str(venv / "bin" / "arena-manage")], work / "site"
        password = secrets.token_urlsafe(16)
        made, deploy_report = prepare_site(manage, env, site, ports, password, r)
        cert = start_stack(stack, venv, env, work, ports)
        c = checks.Client(https_port=ports.https, http_port=ports.http, cafile=cert, host=HOST)
        wait_for("the site through nginx", lambda: c.request("GET", "/healthz").status == 200,
                 timeout=180, stack=stack)  # fmt: skip
        wait_for("the pairs pool", lambda: subprocess.run(
            ["curl", "-fs", f"http://127.0.0.1:{ports.pairs}/healthz", "-H", f"Host: {HOST}"],
            capture_output=True).returncode == 0, timeout=120, stack=stack)  # fmt: skip
        checks.tls_and_redirects(c, r)
        covered = checks.pages_and_read_api(c, r, made["models"][0])
        covered |= checks.votes_and_pairs(c, r, api_key=made["api_key"], models=made["models"])
        covered |= checks.accounts(c, r)
        routes = last_json(run([*manage, "shell", "-c", ROUTES], env=env, cwd=site, quiet=True))
        missing = sorted(set(routes) - covered - {"metrics"})
        checks.expect(not missing, "every route of the URL map is checked", missing)
        r.ok(f"all {len(routes)} routes of the URL map outside /admin/ checked through nginx")
        checks.pairs_pool_served_the_pairs(r, stack.logs)
        checks.real_client_ip(c, r, models=made["models"],
                              shell=lambda code: run([*manage, "shell", "-c", code], env=env,
                                                     cwd=site, quiet=True))  # fmt: skip
        checks.throttled_per_real_client(c, r, models=made["models"], limit=VOTE_LIMIT)
        checks.admin_login(c, r, username="smoke-admin", password=password)
        urls = checks.static_files(c, r)
        wait_for("a recompute on the worker after the votes and one from beat", lambda: last_json(
            run([*manage, "shell", "-c", TRIGGERS], env=env, cwd=site, quiet=True)) >= 2,
            timeout=180, stack=stack)  # fmt: skip
        r.ok(
            "the worker recomputed after votes (trigger=votes) and on beat's schedule (trigger=beat)"
        )
        checks.metrics(c, r)
        weight = page_weight(c, urls)
        r.ok(f"first visit of / transfers {weight:,} bytes (HTML gzip by nginx, assets brotli)")
        stack.stop()
        checks.json_logs(r, stack.logs)
        backups(manage, env, work, venv, server, dbs, r)
    finally:
        stack.stop()
        if venv is not None:
            cleanup(
                venv, server, dbs, redis_url, env.get("CACHE_KEY_PREFIX"), env.get("CELERY_QUEUE")
            )
        if args.keep:
            print(f"smoke: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"smoke: {len(r.lines)} checks passed in {time.monotonic() - started:.0f} s")
    print(f"smoke: {deploy_report}")
    return 0


ROUTES = """
import json
from django.urls import get_resolver
def walk(patterns, prefix=""):
    for p in patterns:
        route = prefix + str(p.pattern)
        if hasattr(p, "url_patterns"):
            yield from walk(p.url_patterns, route)
        elif not route.startswith("admin/"):
            yield route
print(json.dumps(sorted(set(walk(get_resolver().url_patterns)))))
"""

TRIGGERS = """
from leaderboard.models import Snapshot
published = Snapshot.objects.filter(status="published")
print(int(published.filter(trigger="votes").exists()) + int(published.filter(trigger="beat").exists()))
"""


def page_weight(c: checks.Client, urls: list[str]) -> int:
    html = c.request("GET", "/", headers={"Accept-Encoding": "gzip, br"})
    total = len(html.body)
    for url in urls:
        total += len(c.request("GET", url, headers={"Accept-Encoding": "gzip, br"}).body)
    return total


def cleanup(venv: Path, server: str, dbs: list[str], redis_url: str, prefix, queue) -> None:
    for name in dbs:
        try:
            admin_sql(venv, server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        except SystemExit as exc:
            print(f"smoke: could not drop {name}: {exc}", file=sys.stderr)
    if prefix and queue:
        # The cache's keys, the queue and kombu's binding for it all carry the run's tag.
        code = (
            "import sys, redis\nr = redis.Redis.from_url(sys.argv[1])\n"
            "keys = list(r.scan_iter('*' + sys.argv[2] + '*'))\nkeys and r.delete(*keys)"
        )
        subprocess.run([str(venv / "bin" / "python"), "-c", code, redis_url, prefix])


if __name__ == "__main__":
    sys.exit(main())
