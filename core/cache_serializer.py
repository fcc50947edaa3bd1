"""The Redis cache's serializer: JSON (core/jsoncodec.py) where Django's default pickles.

django-redis pickles every value it stores by default, so anyone able to write to the
site's Redis could make a web process run code on its next cache read. This serializer keeps
the one exception -- a plain `int` is stored as its digits, so `incr` and counters work on
it in Redis -- writes bytes (rendered pages and API bodies) as they are
behind a one-byte marker, and everything else as JSON behind another. A value it cannot
read (a pickle, or anything else it did not write) is a miss, logged once per process and
counted, never an error: everything cached is rebuilt from PostgreSQL.
"""

from __future__ import annotations

import logging
from typing import Any

from . import jsoncodec

log = logging.getLogger(__name__)

RAW = b"b"  # bytes follow as they are
JSON = b"j"  # JSON of core/jsoncodec follows

_warned = False


class JsonSerializer:
    """A django-redis serializer (`OPTIONS["SERIALIZER"]`): django-redis stores plain ints
    itself and hands the rest to `dumps`."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        pass

    def dumps(self, obj: Any) -> bytes | int:
        if type(obj) is int:  # exactly int: a bool is not a counter
            return obj
        if type(obj) is bytes:
            return RAW + obj
        return JSON + jsoncodec.dumps(obj)

    def loads(self, data: bytes) -> Any:
        try:
            return int(data)
        except ValueError:
            pass
        marker, body = data[:1], data[1:]
        try:
            if marker == RAW:
                return body
            if marker == JSON:
                return jsoncodec.loads(body)
        except (ValueError, TypeError, KeyError, AttributeError):
            pass
        _foreign()
        return None


def _foreign() -> None:
    global _warned
    from .metrics import CACHE_FOREIGN_VALUES

    CACHE_FOREIGN_VALUES.inc()
    if not _warned:
        _warned = True
        log.warning("A cache entry this site did not write was read as a miss")
