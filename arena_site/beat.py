"""Celery beat's scheduler: when each entry last ran, kept in a JSON file rather than a shelve.

Celery's default `PersistentScheduler` keeps its state in a `shelve` database, which is
pickle: whoever could write that file could make beat run code. This one keeps the same
state -- each entry's last run and run count, so a restarted beat does not run everything
at once or skip a day -- as JSON in the file given by `--schedule` (written to a temporary
file and renamed, so a crash never leaves half a file). The entries themselves always come
from `CELERY_BEAT_SCHEDULE`; a name in the file that is no longer scheduled is dropped.
Selected by `CELERY_BEAT_SCHEDULER` (settings.py).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from pathlib import Path
from typing import Any

from celery.beat import Scheduler

log = logging.getLogger(__name__)


class JsonScheduler(Scheduler):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.schedule_filename = kwargs.get("schedule_filename") or "celerybeat-schedule.json"
        super().__init__(*args, **kwargs)

    def setup_schedule(self) -> None:
        super().setup_schedule()
        for name, state in self._read().items():
            entry = self.schedule.get(name)
            if entry is None or not isinstance(state, dict):
                continue
            try:
                entry.last_run_at = dt.datetime.fromisoformat(state["last_run_at"])
                entry.total_run_count = int(state.get("total_run_count", 0))
            except (KeyError, TypeError, ValueError):
                continue
        self.sync()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(Path(self.schedule_filename).read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning(
                "Beat schedule file %s unreadable (%s); starting afresh",
                self.schedule_filename,
                exc,
            )
            return {}
        return data.get("entries", {}) if isinstance(data, dict) else {}

    def sync(self) -> None:
        entries = {
            name: {
                "last_run_at": entry.last_run_at.isoformat() if entry.last_run_at else None,
                "total_run_count": entry.total_run_count,
            }
            for name, entry in self.schedule.items()
        }
        path = Path(self.schedule_filename)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({"entries": entries}, indent=1))
        os.replace(tmp, path)

    def close(self) -> None:
        self.sync()

    @property
    def info(self) -> str:
        return f"    . state -> {self.schedule_filename} (JSON)"
