"""App config for pair serving (`/create_pair`, `/create_edit_pair`)."""

from __future__ import annotations

import logging

from django.apps import AppConfig


class ServingConfig(AppConfig):
    name = "serving"
    verbose_name = "Pair serving"

    def ready(self) -> None:
        from ingest.binding import set_serving_check

        from . import receivers  # noqa: F401  (serving-state invalidation hooks)
        from .selectors import serves_pairs

        # Votes are bound to served pairs while this server serves them (VOTE_BINDING=auto).
        set_serving_check(serves_pairs)

        # httpx logs every provider call at INFO ("HTTP Request: POST ..."): one line per
        # completion, twice per pair. We log failures ourselves, so keep it to warnings
        # unless the operator configured that logger explicitly.
        httpx_log = logging.getLogger("httpx")
        if httpx_log.level == logging.NOTSET:
            httpx_log.setLevel(logging.WARNING)
