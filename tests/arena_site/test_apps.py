"""A process that is not a worker (gunicorn, manage.py) knows every task by name.

ingest.triggers schedules the recompute by its name; before arena_site's ready() imported
the tasks modules, a web process with a broker raised NotRegistered on the first vote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_recompute_task_resolves_in_a_fresh_non_worker_process():
    env = {
        **os.environ,
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/unused",  # never connected to
        "REDIS_URL": "redis://127.0.0.1:6379/15",
        "SECRET_KEY": "test-only",
        "USER_ID_HMAC_KEY": "test-only",
    }
    code = (
        "import json; from celery import current_app; from ingest.triggers import recompute_task; "
        "assert recompute_task().name == 'leaderboard.tasks.recompute_leaderboard'; "
        "print(json.dumps(sorted(n for n in current_app.tasks if not n.startswith('celery.'))))"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    names = json.loads(result.stdout.strip().splitlines()[-1])
    assert "leaderboard.tasks.recompute_leaderboard" in names
    assert "serving.tasks.fit_latencies" in names and "moderation.tasks.detect_anomalies" in names
