"""The backup tools' connection options come from the site's PostgreSQL settings, whatever
engine module wraps Django's PostgreSQL backend."""

from __future__ import annotations

import pytest
from django.core.management.base import CommandError
from django.db import connections

from core.pg_tools import connection_args


def test_the_postgresql_engine_gives_the_client_tools_their_options(settings):
    assert settings.DATABASES["default"]["ENGINE"] == "core.postgresql"
    args, _env = connection_args()
    assert args[args.index("--dbname") + 1] == settings.DATABASES["default"]["NAME"]


def test_sqlite_is_refused_with_a_reason(monkeypatch):
    monkeypatch.setattr(connections["default"], "vendor", "sqlite")
    with pytest.raises(CommandError, match="Backups need PostgreSQL"):
        connection_args()
