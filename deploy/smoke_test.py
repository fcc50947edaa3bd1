"""The deployment smoke test: docs/deployment.md's blocks marked for CI, run as written, then checks.

    .venv/bin/python deploy/smoke_test.py          (or `make smoke`; `.ci/run` runs it)

1. copies the checkout (with uncommitted files) to the guide's /tmp/code-arena and runs the
   guide's blocks (deploy/runbook.py) in a temporary tree: "install" (the wheel, checked by
   deploy/check_wheel.py, into a fresh virtualenv with the lock file), "settings" (the
   settings file, to which the run's database, Redis, host and fast recompute timings are
   appended), "first-run" (migrate on a fresh PostgreSQL database arena_smoke_<random>,
   collectstatic, check --deploy, seed_catalogue, bootstrap_roles);
2. `check --deploy --fail-level WARNING`, load_demo, then the "processes" block's four
   processes (private ports, fewer workers, unprivileged), a stub LLM provider and nginx
   with deploy/nginx.conf (a throw-away certificate), and checks through nginx
   (deploy/smoke_checks.py), the "prometheus" block's scrape, every log line JSON;
3. the systemd units with `systemd-analyze verify` against this layout;
4. "backup", the database emptied, "restore": every table's rows and the board come back;
   "export" and an import into a fresh database give back the same battles;
5. the upgrade test (deploy/smoke_upgrade.py): the previous release from its commit,
   filled, then the "upgrade" block;
6. fails unless every block the guide marks for CI ran.

Everything it starts it stops, and it drops its databases and its Redis keys (it uses the
Redis database of SMOKE_REDIS_URL, default redis://127.0.0.1:6379/7, under a key prefix and
a Celery queue of its own). --keep leaves the directory (logs) behind.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import smoke_checks as checks
from runbook import Runbook
from smoke_db import admin_sql, db_url, last_json, read_env, run, state
from smoke_stack import (
    HOST,
    Ports,
    Stack,
    nginx_main_conf,
    render_nginx,
    self_signed_cert,
    wait_for,
)
from smoke_upgrade import upgrade

ROOT = Path(__file__).resolve().parents[1]
VOTE_LIMIT = 8  # THROTTLE_VOTE_IP for the run: small, so the throttle check is quick


def copy_checkout(dest: Path) -> None:
    """The checkout's files, committed or not (what `git clone` would give, plus the work)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)


def world_usable(path: Path) -> bool:
    """Whether an unprivileged user may run this file (every directory above it searchable)."""
    real = path.resolve()
    return os.access(real, os.X_OK) and all(
        d.stat().st_mode & 0o001 for d in real.parents
    ) and bool(real.stat().st_mode & 0o005)  # fmt: skip


def shell_env() -> dict[str, str]:
    """The environment the guide's blocks run in: this one, less the checkout's venv."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE", "VIRTUAL_ENV")
           and not k.startswith(("DATABASE_URL", "REDIS_URL"))}  # fmt: skip
    # A Debian machine's PATH first: python3 is the system's, as the guide's reader has it.
    venv_bin = str(ROOT / ".venv" / "bin")
    rest = [p for p in env.get("PATH", "").split(":") if p and p != venv_bin]
    env["PATH"] = ":".join(["/usr/local/bin", "/usr/bin", "/bin", *rest])
    return env


def install(rb: Runbook, r: checks.Results) -> tuple[Path, Path]:
    copy_checkout(rb.where("/tmp/code-arena"))
    rb.run("install", env=shell_env())
    wheel = next(rb.where("/tmp/dist").glob("code_arena-*.whl"))
    run([sys.executable, str(ROOT / "deploy" / "check_wheel.py"), str(wheel)])
    venv = rb.where("/srv/arena") / "venv"
    where = run([str(venv / "bin" / "python"), "-c", "import arena_site; print(arena_site.__file__)"],
                cwd=rb.root, quiet=True).strip()  # fmt: skip
    checks.expect(where.startswith(str(venv)) and not where.startswith(str(ROOT)),
                  "the site imports from the fresh venv, not the checkout", where)  # fmt: skip
    r.ok(f"guide block 'install': {wheel.name} built from a copy of the checkout, holds every "
         "app, template, static and data file; installed with requirements/app.txt into a "
         "fresh venv outside the checkout")  # fmt: skip
    return wheel, venv


def settings_file(rb: Runbook, *, database: str, redis_url: str, ports: Ports, tag: str) -> Path:
    rb.run("settings", env=shell_env())
    path = rb.where("/etc/arena") / "env"
    written = read_env(path)
    for name in ("SECRET_KEY", "USER_ID_HMAC_KEY", "TRUSTED_PROXIES", "HTTPS", "LOG_FORMAT"):
        checks.expect(bool(written.get(name)), f"the guide's settings block sets {name}")
    checks.expect(written["SECRET_KEY"] != written["USER_ID_HMAC_KEY"], "two different keys")
    with path.open("a") as f:
        f.write(
            f"DATABASE_URL={database}\nREDIS_URL={redis_url}\n"
            f"CSRF_TRUSTED_ORIGINS=https://{HOST}:{ports.https}\n"
            "SECURE_HSTS_INCLUDE_SUBDOMAINS=1\nSECURE_HSTS_PRELOAD=1\n"
            f"CACHE_KEY_PREFIX=arena-smoke-{tag}\nCELERY_QUEUE=arena-smoke-{tag}\n"
            f"THROTTLE_VOTE_IP={VOTE_LIMIT}/hour\n"
            "RECOMPUTE_DEBOUNCE_SECONDS=1\nRECOMPUTE_INTERVAL_SECONDS=20\n"
        )
    return path


def site_env(path: Path) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", **read_env(path)}


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


def prepare_site(rb: Runbook, manage: list[str], env: dict, ports: Ports, password: str,
                 r: checks.Results) -> tuple[dict, str]:  # fmt: skip
    srv = rb.where("/srv/arena")
    rb.run("first-run", env=shell_env())
    checks.expect(any((srv / "staticfiles").rglob("*.br")), "collectstatic wrote .br files")
    r.ok("guide block 'first-run': migrate on a fresh PostgreSQL database, collectstatic "
         "(hashed, .gz and .br), check --deploy, seed_catalogue, bootstrap_roles")  # fmt: skip
    deploy = subprocess.run([*manage, "check", "--deploy", "--fail-level", "WARNING"],
                            env=env, cwd=srv, capture_output=True, text=True)  # fmt: skip
    checks.expect(deploy.returncode == 0, "check --deploy passes with no warning",
                  deploy.stdout + deploy.stderr)  # fmt: skip
    report = (deploy.stdout + deploy.stderr).strip().splitlines()[-1]
    r.ok(f"check --deploy --fail-level WARNING: {report}")
    run([*manage, "load_demo", "--simulated", "3000"], env=env, cwd=srv, quiet=True)
    r.ok("load_demo from the installed package (its data files): catalogue, sample, board")
    setup = SETUP.format(password=password, stub=f"http://127.0.0.1:{ports.stub}/v1")
    made = last_json(run([*manage, "shell", "-c", setup], env=env, cwd=srv, quiet=True))
    return made, report


def process_commands(rb: Runbook, ports: Ports) -> dict[str, list[str]]:
    """The guide's four processes, with the run's ports and smaller pools."""
    names = {
        " --preload ": "web",
        " gthread ": "pairs",
        " worker ": "worker",
        " beat ": "beat",
    }
    found: dict[str, list[str]] = {}
    for line in rb.commands("processes"):
        name = next(n for marker, n in names.items() if marker in f" {line} ")
        line = line.replace("127.0.0.1:8000", f"127.0.0.1:{ports.web}")
        line = line.replace("127.0.0.1:8001", f"127.0.0.1:{ports.pairs}")
        line = re.sub(r"--workers \d+", "--workers 2" if name == "web" else "--workers 1", line)
        line = re.sub(r"--threads \d+", "--threads 16", line)
        line = line.replace("--concurrency=2", "--concurrency=1")
        found[name] = line.split()
    checks.expect(set(found) == {"web", "pairs", "worker", "beat"}, "four processes", found)
    return found


def start_stack(stack: Stack, rb: Runbook, venv: Path, env: dict, work: Path, ports: Ports) -> Path:
    srv = rb.where("/srv/arena")
    stack.may_drop = world_usable(venv / "bin" / "python")
    if os.geteuid() == 0 and not stack.may_drop:
        print("smoke: the venv's interpreter is not usable by nobody: the site runs as root")
    stack.start("stub", [sys.executable, str(ROOT / "tests" / "serving" / "stub_provider.py"),
                         "--port", str(ports.stub), "--latency", "0.05"], env=env, cwd=srv)  # fmt: skip
    # The site's processes run unprivileged (as nobody under a root CI), as the arena user
    # would: they write the metrics directory and beat's state file only.
    for writable in (rb.where("/run/arena") / "metrics", srv):
        writable.chmod(0o777)
    for name, argv in process_commands(rb, ports).items():
        extra = {"ARENA_PRELOAD_LABELS": "0"} if name == "pairs" else {}  # as its unit
        stack.start(name, argv, env={**env, **extra}, cwd=srv, unprivileged=True)
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


def prometheus_scrape(rb: Runbook, ports: Ports, r: checks.Results) -> None:
    """What the guide's prometheus.yml makes Prometheus ask: the target, the path, its Host."""
    import http.client

    block = rb.text("prometheus")
    rb.ran.add("prometheus")
    path = re.search(r"metrics_path:\s*(\S+)", block).group(1)  # type: ignore[union-attr]
    target = re.search(r'targets:\s*\["([^"]+)"\]', block).group(1)  # type: ignore[union-attr]
    checks.expect(target == "127.0.0.1:8000", "the example scrapes the web pool", target)
    conn = http.client.HTTPConnection("127.0.0.1", ports.web, timeout=30)
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{ports.web}",
                                       "Accept": "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"})  # fmt: skip
    resp = conn.getresponse()
    text = resp.read().decode()
    conn.close()
    checks.expect(resp.status == 200 and "arena_votes_total" in text,
                  "the guide's Prometheus example scrapes the web pool (Host allowed)",
                  (resp.status, text[:300]))  # fmt: skip
    r.ok("the guide's prometheus.yml: GET /metrics on the web pool with Prometheus' Host "
         "header answers 200 with the arena's metrics")  # fmt: skip


def systemd_units(rb: Runbook, r: checks.Results) -> None:
    """The shipped units, with the guide's paths of this run, pass systemd-analyze verify."""
    analyze = shutil.which("systemd-analyze")
    checks.expect(analyze is not None, "systemd-analyze is installed (.ci/run installs it)")
    units = rb.root / "units"
    units.mkdir()
    names = []
    for unit in sorted((ROOT / "deploy" / "systemd").glob("*.service")):
        text = unit.read_text()
        for guide_path in ("/srv/arena", "/etc/arena"):
            text = text.replace(guide_path, str(rb.where(guide_path)))
        (units / unit.name).write_text(text)
        names.append(unit.name)
    checks.expect(len(names) == 4, "units for web, pairs, worker and beat", names)
    result = subprocess.run([str(analyze), "verify", *(str(units / n) for n in names)],
                            capture_output=True, text=True)  # fmt: skip
    checks.expect(result.returncode == 0 and not result.stderr.strip(),
                  "systemd-analyze verify passes", result.stderr)  # fmt: skip
    r.ok(f"systemd-analyze verify: {', '.join(names)} (this layout's venv, env file, commands)")


def backups(rb: Runbook, manage: list[str], env: dict, venv: Path, server: str, dbs: list[str],
            r: checks.Results) -> None:  # fmt: skip
    python, main = venv / "bin" / "python", env["DATABASE_URL"]
    srv = rb.where("/srv/arena")
    rb.where("/var/backups/arena").chmod(0o777)
    before = state(python, main)
    rb.run("backup", env=shell_env())
    name = main.rsplit("/", 1)[1]
    admin_sql(python, server, f'DROP DATABASE "{name}" WITH (FORCE)')
    admin_sql(python, server, f'CREATE DATABASE "{name}"')
    checks.expect(sum(state(python, main)["tables"].values()) == 0, "the database was emptied")
    rb.run("restore", env=shell_env())
    after = state(python, main)
    checks.expect(after["tables"] == before["tables"], "every table's rows are back",
                  {t: (n, after["tables"].get(t)) for t, n in before["tables"].items()
                   if after["tables"].get(t) != n})  # fmt: skip
    checks.expect(after["board"] == before["board"] and after["users"] == before["users"],
                  "the published board and the pseudonyms are back")  # fmt: skip
    r.ok(f"guide blocks 'backup' and 'restore': dump, database dropped and recreated, restore: "
         f"{len(before['tables'])} tables, {sum(before['tables'].values()):,} rows and the "
         f"published board ({len(before['board'])} rows) identical")  # fmt: skip

    rb.run("export", env=shell_env())
    export = rb.where("/var/backups/arena") / "battles.jsonl"
    key = ("pair_id", "outcome", "model_a", "model_b", "user_hash", "kind", "source")

    def battles(path: Path) -> list[tuple]:
        rows = (json.loads(x) for x in path.read_text().splitlines())
        return sorted(tuple(b[k] for k in key) for b in rows)

    fresh = {**env, "DATABASE_URL": db_url(server, dbs[1])}
    admin_sql(python, server, f'CREATE DATABASE "{dbs[1]}"')
    run([*manage, "migrate", "--noinput", "-v0"], env=fresh, cwd=srv)
    run([*manage, "import_battles", str(export), "--add-unknown-models"], env=fresh, cwd=srv,
        quiet=True)  # fmt: skip
    again = rb.root / "battles-again.jsonl"
    run([*manage, "export_battles", "-o", str(again)], env=fresh, cwd=srv, quiet=True)
    checks.expect(battles(again) == battles(export), "export -> import keeps every battle")
    r.ok(f"guide block 'export', then import_battles --add-unknown-models on a fresh database: "
         f"{len(battles(export)):,} battles, pair ids, outcomes, models and pseudonyms identical")  # fmt: skip


def spoofed_headers_straight_to_the_pool(ports: Ports, r: checks.Results) -> None:
    """A client reaching the web pool directly cannot claim to be nginx or its neighbour."""
    import http.client

    def ask(method: str, path: str, headers: dict[str, str]) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", ports.web, timeout=30,
                                          source_address=("127.0.0.9", 0))  # fmt: skip
        conn.request(method, path, body=b"{}" if method == "POST" else None,
                     headers={"Host": HOST, "Content-Type": "application/json", **headers})  # fmt: skip
        resp = conn.getresponse()
        resp.read()
        conn.close()
        return resp.status

    # HTTPS=1: a request the app sees as plain http is redirected to https, not served.
    status = ask("POST", "/api/v1/battles", {"X-Forwarded-Proto": "https"})
    checks.expect(status == 301, "X-Forwarded-Proto from a direct client is not believed", status)
    status = ask("GET", "/metrics", {"X-Forwarded-For": "127.0.0.1"})
    checks.expect(status == 403, "/metrics refused to a direct client claiming "
                  "X-Forwarded-For: 127.0.0.1", status)  # fmt: skip
    r.ok("straight to the web pool from 127.0.0.9: X-Forwarded-Proto: https and "
         "X-Forwarded-For: 127.0.0.1 are not believed (redirected; /metrics 403)")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    args = parser.parse_args()
    started = time.monotonic()
    server = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres"
    redis_url = os.environ.get("SMOKE_REDIS_URL", "redis://127.0.0.1:6379/7")
    tag = secrets.token_hex(4)
    dbs = [f"arena_smoke_{tag}", f"arena_smoke_{tag}_import"]
    work = Path(tempfile.mkdtemp(prefix="arena-smoke-"))
    work.chmod(0o755)  # nginx's workers (nobody) read below it
    (work / "logs").mkdir()
    rb = Runbook(work / "root", host=HOST)
    checks.expect(ROOT not in rb.root.parents, "the site's tree is outside the checkout")
    r, ports, stack = checks.Results(), Ports(), Stack(work / "logs")
    venv: Path | None = None
    env: dict[str, str] = {}
    figures: dict[str, float] = {}
    try:
        wheel, venv = install(rb, r)
        python = venv / "bin" / "python"
        admin_sql(python, server, f'CREATE DATABASE "{dbs[0]}"')
        path = settings_file(rb, database=db_url(server, dbs[0]), redis_url=redis_url,
                             ports=ports, tag=tag)  # fmt: skip
        env = site_env(path)
        r.ok("guide block 'settings': the settings file, with the run's database and Redis")
        manage = [str(venv / "bin" / "arena-manage")]
        srv = rb.where("/srv/arena")
        password = secrets.token_urlsafe(16)
        made, deploy_report = prepare_site(rb, manage, env, ports, password, r)
        cert = start_stack(stack, rb, venv, env, work, ports)
        c = checks.Client(https_port=ports.https, http_port=ports.http, cafile=cert, host=HOST)
        wait_for("the site through nginx", lambda: c.request("GET", "/healthz").status == 200,
                 timeout=180, stack=stack)  # fmt: skip
        figures["site"] = time.monotonic() - started
        r.ok(f"guide block 'processes': web, pairs, worker and beat running; the site answers "
             f"through nginx {figures['site']:.0f} s after the start")  # fmt: skip
        wait_for("the pairs pool through nginx", lambda: c.request(
            "GET", "/healthz/pairs").status == 200, timeout=120, stack=stack)  # fmt: skip
        live = c.request("GET", "/healthz/pairs").json()
        checks.expect(live.get("check") == "live", "/healthz/pairs is the pairs pool's live", live)
        r.ok("/healthz/pairs answers the pairs pool's liveness through nginx")
        checks.tls_and_redirects(c, r)
        covered = checks.pages_and_read_api(c, r, made["models"][0])
        covered |= checks.votes_and_pairs(c, r, api_key=made["api_key"], models=made["models"])
        covered |= checks.accounts(c, r)
        routes = last_json(run([*manage, "shell", "-c", ROUTES], env=env, cwd=srv, quiet=True))
        missing = sorted(set(routes) - covered - {"metrics"})
        checks.expect(not missing, "every route of the URL map is checked", missing)
        r.ok(f"all {len(routes)} routes of the URL map outside /admin/ checked through nginx")
        checks.pairs_pool_served_the_pairs(r, stack.logs)
        shell = lambda code: run([*manage, "shell", "-c", code], env=env, cwd=srv, quiet=True)  # noqa: E731
        checks.real_client_ip(c, r, models=made["models"], shell=shell)
        spoofed_headers_straight_to_the_pool(ports, r)
        checks.throttled_per_real_client(c, r, models=made["models"], limit=VOTE_LIMIT)
        checks.admin_login(c, r, username="smoke-admin", password=password)
        urls = checks.static_files(c, r)
        wait_for("a recompute on the worker after the votes and one from beat", lambda: last_json(
            shell(TRIGGERS)) >= 2, timeout=180, stack=stack)  # fmt: skip
        r.ok(
            "the worker recomputed after votes (trigger=votes) and on beat's schedule (trigger=beat)"
        )
        checks.metrics(c, r)
        prometheus_scrape(rb, ports, r)
        weight = page_weight(c, urls)
        r.ok(f"first visit of / transfers {weight:,} bytes (HTML gzip by nginx, assets brotli)")
        stack.stop()
        checks.json_logs(r, stack.logs)
        systemd_units(rb, r)
        backups(rb, manage, env, venv, server, dbs, r)
        figures["upgrade"] = upgrade(work=work / "upgrade", src=rb.where("/tmp/code-arena"),
                                     wheel=wheel, server=server, redis_url=redis_url, tag=tag,
                                     python3=shutil.which("python3") or sys.executable, r=r)  # fmt: skip
        rb.ran.add("upgrade")  # run in the upgrade test's own tree, on the previous release
        unrun = rb.unrun()
        checks.expect(not unrun, "every block docs/deployment.md marks for CI ran", unrun)
        r.ok(f"every block docs/deployment.md marks for CI ran ({len(rb.blocks)})")
    finally:
        stack.stop()
        if venv is not None:
            cleanup(venv, server, dbs, redis_url, env.get("CACHE_KEY_PREFIX"),
                    env.get("CELERY_QUEUE"), tag)  # fmt: skip
        if args.keep:
            print(f"smoke: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"smoke: {len(r.lines)} checks passed in {time.monotonic() - started:.0f} s")
    print(f"smoke: from the start to the site answering through nginx: {figures['site']:.0f} s; "
          f"the upgrade block on the filled database: {figures['upgrade']:.1f} s")  # fmt: skip
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


def cleanup(venv: Path, server: str, dbs: list[str], redis_url: str, prefix, queue,
            tag: str) -> None:  # fmt: skip
    for name in dbs:
        try:
            admin_sql(
                venv / "bin" / "python", server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
            )
        except SystemExit as exc:
            print(f"smoke: could not drop {name}: {exc}", file=sys.stderr)
    if prefix and queue:
        # The cache's keys, the queue and kombu's binding for it all carry the run's tag.
        code = (
            "import sys, redis\nr = redis.Redis.from_url(sys.argv[1])\n"
            "keys = list(r.scan_iter('*' + sys.argv[2] + '*'))\nkeys and r.delete(*keys)"
        )
        subprocess.run([str(venv / "bin" / "python"), "-c", code, redis_url, prefix])
        # The upgrade test's keys carry the same tag.
        subprocess.run([str(venv / "bin" / "python"), "-c", code, redis_url, f"up-{tag}"])


if __name__ == "__main__":
    sys.exit(main())
