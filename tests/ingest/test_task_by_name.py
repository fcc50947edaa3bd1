"""The recompute that ingest schedules by name is registered in every process, web ones too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import django, sys
django.setup()
from ingest.triggers import RECOMPUTE_TASK, recompute_task
task = recompute_task()
print(task.name)
"""


def test_a_fresh_web_process_finds_the_recompute_task():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "arena_site.settings"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("leaderboard.tasks.recompute_leaderboard")
