"""The embedded default (nothing set) and the SECRET_KEY rule, in fresh processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLEAN = {
    k: v
    for k, v in os.environ.items()
    if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DEBUG")
}


def manage(*args: str, env: dict, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_outside_debug_a_missing_secret_key_stops_startup_clearly():
    env = {**CLEAN, "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/arena"}
    result = manage("check", env=env)
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


@pytest.mark.integration
def test_embedded_default_migrates_loads_demo_and_computes_a_board(tmp_path):
    env = {**CLEAN, "SQLITE_PATH": str(tmp_path / "demo.sqlite3")}
    assert manage("migrate", "--noinput", env=env).returncode == 0
    result = manage("load_demo", "--simulated", "3000", env=env)
    assert result.returncode == 0, result.stderr
    assert "112 imported" in result.stdout
    assert "Published snapshot" in result.stdout
    probe = (
        "from leaderboard.selectors import board; b = board(); "
        "print(len(b['models']), b['snapshot']['battles'])"
    )
    out = manage("shell", "-c", probe, env=env)
    models, battles = out.stdout.strip().splitlines()[-1].split()
    assert int(models) == 11 and int(battles) == 3112
