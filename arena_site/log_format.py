"""Structured logs: one JSON object per line when LOG_FORMAT=json (settings.LOGGING).

Each line carries `time` (UTC, ISO 8601 with milliseconds), `level`, `logger`, `message`
(the formatted text), `process`, and, when there was one, `exception` (the traceback as
text). Fields given with `extra={...}` are added under their own names (as text when they are
not JSON values). The project never logs code or raw user ids, so nothing here scrubs.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

# Attributes every LogRecord has; anything else on a record came from `extra=`.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "taskName",
}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "process": record.process,
        }
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            out["exception"] = record.exc_text
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in out:
                out[key] = value
        return json.dumps(out, ensure_ascii=False, default=str)
