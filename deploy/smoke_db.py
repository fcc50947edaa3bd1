"""The smoke test's view of its databases: run commands, create and drop databases, and read
a database's state (every table's row count, the published board) for before/after checks.

The reads are plain SQL run by a venv's own interpreter (psycopg comes with the site), so
they mean the same on the previous release's schema and on this one's. Standard library
otherwise.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

STATE = r"""
import json, sys, psycopg
with psycopg.connect(sys.argv[1]) as c:
    tables = [r[0] for r in c.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")]
    counts = {t: c.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    if "leaderboard_snapshotrow" not in counts:  # an emptied database
        print(json.dumps({"tables": counts, "board": [], "users": []}))
        raise SystemExit(0)
    board = c.execute(
        "SELECT s.key, m.key, r.rating, r.ci_lower, r.ci_upper, r.rank, r.votes "
        "FROM leaderboard_snapshotrow r JOIN leaderboard_snapshotslice s ON r.slice_id = s.id "
        "JOIN leaderboard_arenamodel m ON m.id = r.model_id WHERE s.snapshot_id = "
        "(SELECT max(id) FROM leaderboard_snapshot WHERE status = 'published') ORDER BY 1, 2"
    ).fetchall()
    users = c.execute("SELECT user_hash, count(*) FROM ingest_battle GROUP BY 1 ORDER BY 1").fetchall()
print(json.dumps({"tables": counts, "board": board, "users": users}))
"""


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
    """The JSON a script printed last (anything before is log output)."""
    return json.loads(output.strip().splitlines()[-1])


def db_url(base: str, name: str) -> str:
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", "", ""))


def admin_sql(python: Path, server: str, sql: str) -> None:
    code = (
        "import sys, psycopg\n"
        "with psycopg.connect(sys.argv[1], autocommit=True) as c: c.execute(sys.argv[2])"
    )
    run([str(python), "-c", code, db_url(server, "postgres"), sql])


def state(python: Path, url: str) -> dict:
    """{"tables": {name: rows}, "board": published board's rows, "users": (user_hash, votes)}."""
    return last_json(run([str(python), "-c", STATE, url], quiet=True))


def read_env(path: Path) -> dict[str, str]:
    """The variables a shell gets from `set -a; . path` (later lines win)."""
    out = subprocess.run(
        ["bash", "-c", 'set -a; . "$1"; set +a; env -0', "_", str(path)],
        env={"PATH": "/usr/bin:/bin"}, capture_output=True, check=True,
    ).stdout.decode()  # fmt: skip
    pairs = (line.split("=", 1) for line in out.split("\0") if "=" in line)
    return {k: v for k, v in pairs if k not in ("PATH", "PWD", "SHLVL", "_", "OLDPWD")}
