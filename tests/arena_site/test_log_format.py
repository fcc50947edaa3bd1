"""LOG_FORMAT=json: every log line is one JSON object with the documented fields."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from arena_site.log_format import JsonFormatter

ROOT = Path(__file__).resolve().parents[2]


def test_a_record_becomes_one_json_line_with_exception_and_extra():
    try:
        raise ValueError("bad value")
    except ValueError:
        record = logging.getLogger("arena.test").makeRecord(
            "arena.test",
            logging.ERROR,
            __file__,
            1,
            "vote %s failed",
            ("p-1",),
            sys.exc_info(),
            extra={"pair_id": "p-1", "obj": object()},
        )
    line = JsonFormatter().format(record)
    assert "\n" not in line
    out = json.loads(line)
    assert out["level"] == "ERROR" and out["logger"] == "arena.test"
    assert out["message"] == "vote p-1 failed"
    assert out["time"].endswith("+00:00") and out["process"] == os.getpid()
    assert "ValueError: bad value" in out["exception"]
    assert out["pair_id"] == "p-1" and out["obj"].startswith("<object object")


def test_the_setting_switches_a_command_s_logs_to_json(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(LOG_FORMAT="json", SQLITE_PATH=str(tmp_path / "x.sqlite3"))
    code = "import logging; logging.getLogger('arena.probe').warning('hello %s', 'world')"
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.strip()]
    assert {"level": "WARNING", "logger": "arena.probe", "message": "hello world"}.items() <= (
        lines[-1].items()
    )
