"""The upgrade test: the previous release, filled with votes, upgraded as docs/deployment.md says.

1. The previous release is the entry below this version in CHANGELOG.md, with the commit
   it was built from; its source comes out of the repository's history (`git archive`, which
   a clone has) and its wheel is built from that.
2. It is installed into a virtualenv of its own (its dependencies held to this release's
   lock, as it had none), given the settings it documented, migrated on a fresh database
   and filled: the demo's simulated battles and votes from one extension user, then a
   recompute. The database's state is read: every table's row count, the published board,
   each user pseudonym's vote count, and that user's vote count through the site.
3. The settings are changed as CHANGELOG.md's "Upgrading" list says, and section 10's
   block ("upgrade") runs as written: `pip install --upgrade -r requirements/app.txt` with
   this checkout's wheel, `migrate`, `collectstatic`. Its time is the upgrade's figure.
4. The installed version is this one; every table the old release had holds the same rows
   (bookkeeping tables, `MAY_GROW`, may only grow),
   the published board and the pseudonyms are unchanged, the user still has their votes,
   and a recompute on the new code publishes a board of the same battles.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import smoke_checks as checks
from runbook import Runbook
from smoke_db import admin_sql, db_url, last_json, read_env, run, state
from smoke_stack import HOST

# Tables an upgrade adds rows to by design: Django records the new models' content types and
# permissions, and a data migration that rewrites battles (ingest 0006: the release's sample
# user becomes no user) marks them for the next recount.
MAY_GROW = {"django_migrations", "django_content_type", "auth_permission", "leaderboard_battlemark"}

ROOT = Path(__file__).resolve().parents[1]
USER = "upgrade-user-machine-id"

FILL = """
import json
from django.test import Client
c = Client()
items = [{"completionId": f"u-{i}-{side}", "model": m, "pairIndex": side, "completion": "x",
          "prefix": "def f():", "suffix": "", "privacy": "Private"}
         for i in range(3) for side, m in enumerate(["gpt-4o-2024-08-06", "codestral-2405"])]
for i in range(3):
    body = {"pairId": f"upgrade-{i}", "userId": "@USER@", "acceptedIndex": i % 2, "version": "0.2.2",
            "privacy": "Private", "fileType": "python",
            "completionItems": [x for x in items if x["completionId"].startswith(f"u-{i}-")]}
    r = c.put("/add_completion_outcome", json.dumps(body), content_type="application/json", secure=True)
    assert r.status_code == 200, r.content
print(json.dumps(r.status_code))
""".replace("@USER@", USER)

COUNT = """
import json
from django.test import Client
r = Client().post("/user_vote_count", json.dumps({"userId": "@USER@"}), content_type="application/json", secure=True)
print(json.dumps(r.json()["voteCount"]))
""".replace("@USER@", USER)


def previous_release(changelog: Path, version: str) -> tuple[str, str]:
    """(version, commit) of the release entry below `version`'s in CHANGELOG.md."""
    headings = list(re.finditer(r"^## (\S+)", changelog.read_text(), re.M))
    names = [h.group(1) for h in headings]
    checks.expect(version in names, f"CHANGELOG.md has an entry for {version}", names)
    i = names.index(version)
    checks.expect(i + 1 < len(names), "CHANGELOG.md names a release before this one", names)
    text = changelog.read_text()
    end = headings[i + 2].start() if i + 2 < len(headings) else len(text)
    found = re.search(r"Commit: `([0-9a-f]{40})`", text[headings[i + 1].start() : end])
    checks.expect(found is not None, f"CHANGELOG.md's {names[i + 1]} entry names its commit")
    assert found is not None
    return names[i + 1], found.group(1)


def old_wheel(commit: str, work: Path) -> Path:
    src, dist = work / "old-src", work / "old-dist"
    src.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(src)])
    return next(dist.glob("code_arena-*.whl"))


def upgrade(*, work: Path, src: Path, wheel: Path, server: str, redis_url: str, tag: str,
            python3: str, r: checks.Results) -> float:  # fmt: skip
    """Run the upgrade test; returns the seconds the documented upgrade block took."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    old_version, commit = previous_release(ROOT / "CHANGELOG.md", version)
    checks.expect(old_version != version, "the version was bumped since the previous release")
    rb = Runbook(work / "root", host=HOST)
    srv, etc = rb.where("/srv/arena"), rb.where("/etc/arena")
    for guide_path, target in (("/tmp/code-arena", src), ("/tmp/dist", wheel.parent)):
        rb.where(guide_path).parent.mkdir(parents=True, exist_ok=True)
        rb.where(guide_path).symlink_to(target)
    before_wheel = old_wheel(commit, work)
    venv = srv / "venv"
    run([python3, "-m", "venv", str(venv)])
    run([str(venv / "bin" / "pip"), "install", "--quiet", "-c", str(src / "requirements" / "app.txt"),
         str(before_wheel)])  # fmt: skip
    database = f"arena_smoke_{tag}_upgrade"
    admin_sql(venv / "bin" / "python", server, f'CREATE DATABASE "{database}"')
    try:
        return _upgrade(rb=rb, srv=srv, etc=etc, venv=venv, url=db_url(server, database),
                        redis_url=redis_url, tag=tag, versions=(old_version, version),
                        commit=commit, r=r)  # fmt: skip
    finally:
        admin_sql(
            venv / "bin" / "python", server, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'
        )


def _upgrade(*, rb: Runbook, srv: Path, etc: Path, venv: Path, url: str, redis_url: str,
             tag: str, versions: tuple[str, str], commit: str, r: checks.Results) -> float:  # fmt: skip
    old_version, version = versions
    secret = f"old-secret-{tag}-" + "s" * 40
    etc.mkdir(parents=True)
    # What 0.1.0's guide had operators write (NUM_PROXIES; no USER_ID_HMAC_KEY).
    settings_file = etc / "env"
    settings_file.write_text(
        f"SECRET_KEY={secret}\nDATABASE_URL={url}\nREDIS_URL={redis_url}\n"
        "ALLOWED_HOSTS=arena.test,testserver\nNUM_PROXIES=1\nHTTPS=1\nDEBUG=0\n"
        f"STATIC_ROOT={srv / 'staticfiles'}\nLOG_FORMAT=json\n"
        f"CACHE_KEY_PREFIX=arena-smoke-up-{tag}\nCELERY_QUEUE=arena-smoke-up-{tag}\n"
        "RECOMPUTE_ON_VOTES=0\n"
    )

    def manage(*args: str, quiet: bool = True) -> str:
        env = {"PATH": "/usr/bin:/bin", **read_env(settings_file)}
        return run([str(venv / "bin" / "arena-manage"), *args], env=env, cwd=srv, quiet=quiet)

    manage("migrate", "--noinput", "-v0")
    manage("load_demo", "--simulated", "2000")
    manage("shell", "-c", FILL)
    manage("recompute_leaderboard")
    before = state(venv / "bin" / "python", url)
    votes_before = last_json(manage("shell", "-c", COUNT))
    checks.expect(votes_before == 3, "the old release counts the user's votes", votes_before)
    battles = before["tables"]["ingest_battle"]
    r.ok(f"{old_version} built from {commit[:10]} (git archive), installed, migrated, filled: "
         f"{battles:,} battles, {sum(before['tables'].values()):,} rows in "
         f"{len(before['tables'])} tables, a published board")  # fmt: skip

    # CHANGELOG.md's "Upgrading from 0.1.0", steps 1 and 2.
    kept = [x for x in settings_file.read_text().splitlines() if not x.startswith("NUM_PROXIES=")]
    settings_file.write_text(
        "\n".join([*kept, f"USER_ID_HMAC_KEY={secret}", "TRUSTED_PROXIES=127.0.0.1/32,::1/128"])
        + "\n"
    )
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(srv)}
    started = time.monotonic()
    rb.run("upgrade", env=env)
    seconds = time.monotonic() - started
    installed = run([str(venv / "bin" / "python"), "-c",
                     "import importlib.metadata as m; print(m.version('code-arena'))"], quiet=True)  # fmt: skip
    checks.expect(installed.strip() == version, f"pip installed {version}", installed)

    after = state(venv / "bin" / "python", url)
    lost = {t: (n, after["tables"].get(t)) for t, n in before["tables"].items()
            if t not in MAY_GROW and after["tables"].get(t) != n}  # fmt: skip
    checks.expect(not lost, "every table of the old release holds the same rows", lost)
    shrunk = {t: (before["tables"][t], after["tables"].get(t, 0)) for t in MAY_GROW
              if after["tables"].get(t, 0) < before["tables"].get(t, 0)}  # fmt: skip
    checks.expect(not shrunk, "bookkeeping tables only grew", shrunk)
    checks.expect(after["board"] == before["board"], "the published board is unchanged")
    checks.expect(after["users"] == before["users"], "every pseudonym keeps its votes")
    votes_after = last_json(manage("shell", "-c", COUNT))
    checks.expect(
        votes_after == 3, "the user's votes are still theirs (same pseudonym)", votes_after
    )
    manage("recompute_leaderboard")
    recomputed = last_json(manage("shell", "-c",
        "import json; from leaderboard.models import Snapshot; "
        "print(json.dumps(Snapshot.objects.filter(status='published').latest('id').battles))"))  # fmt: skip
    checks.expect(recomputed == battles, "a recompute on the new code counts the same battles",
                  (recomputed, battles))  # fmt: skip
    r.ok(f"upgraded {old_version} -> {version} with docs/deployment.md's block in {seconds:.1f} s: "
         f"every row of {len(before['tables'])} tables, the board, the pseudonyms (the user's "
         f"{votes_after} votes) unchanged; a recompute on the new code publishes "
         f"{recomputed:,} battles")  # fmt: skip
    shutil.rmtree(srv / "staticfiles", ignore_errors=True)
    return seconds
