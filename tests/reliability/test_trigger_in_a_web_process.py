"""A web process (which never autodiscovers Celery tasks) can still schedule the recompute by name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import sys
import django
django.setup()
assert "leaderboard.tasks" not in sys.modules, "imported already: the test proves nothing"
from ingest.triggers import RECOMPUTE_TASK, recompute_task
assert recompute_task().name == RECOMPUTE_TASK
print("ok")
"""


def test_the_recompute_task_resolves_in_a_fresh_web_process():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "arena_site.settings"}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")
