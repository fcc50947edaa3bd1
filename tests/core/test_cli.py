"""Long commands show a progress bar on a terminal, and nothing extra when piped."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], env: dict, terminal: bool) -> tuple[int, str]:
    """Run manage.py with stderr on a pseudo-terminal (or a pipe); returns its stderr."""
    if not terminal:
        r = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
        )
        return r.returncode, r.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=slave,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=300), b"".join(chunks).decode("utf-8", "replace")


def test_simulate_and_recompute_show_progress_only_on_a_terminal(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(SQLITE_PATH=str(tmp_path / "p.sqlite3"), LOG_LEVEL="WARNING")
    assert _run(["migrate", "-v0"], env, terminal=False)[0] == 0

    code, err = _run(["simulate_battles", "--battles", "3000"], env, terminal=True)
    assert code == 0
    assert "Writing: 100%" in err and "3000/3000" in err
    code, err = _run(["recompute_leaderboard"], env, terminal=True)
    assert code == 0 and "Fitting: 100%" in err and " slices" in err
    code, err = _run(["export_battles", "-o", str(tmp_path / "e.jsonl")], env, terminal=True)
    assert code == 0 and "Exporting: 100%" in err and "3000/3000" in err

    code, err = _run(["recompute_leaderboard"], env, terminal=False)
    assert code == 0 and err == ""
