"""pg_dump and pg_restore for the site's own database, with the connection of its settings.

`backup_database` and `restore_database` (management commands) run PostgreSQL's client
tools against `DATABASES["default"]`, so an operator needs nothing but the site's
environment file: no second place that names the database, and no dump written by the
`postgres` user into a directory it cannot write. The password travels in PGPASSWORD,
never on a command line.
"""

from __future__ import annotations

import os
import shutil

from django.conf import settings
from django.core.management.base import CommandError
from django.db import connections


def connection_args() -> tuple[list[str], dict[str, str]]:
    """The client tools' connection options and environment for the default database."""
    db = settings.DATABASES["default"]
    if connections["default"].vendor != "postgresql":
        raise CommandError(
            "Backups need PostgreSQL (DATABASE_URL); the embedded SQLite file is copied as it is."
        )
    args = ["--host", str(db.get("HOST") or "127.0.0.1"), "--port", str(db.get("PORT") or 5432)]
    if db.get("USER"):
        args += ["--username", str(db["USER"])]
    env = dict(os.environ)
    if db.get("PASSWORD"):
        env["PGPASSWORD"] = str(db["PASSWORD"])
    return [*args, "--dbname", str(db["NAME"])], env


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise CommandError(f"{name} is not installed (Debian: apt-get install postgresql-client).")
    return path
