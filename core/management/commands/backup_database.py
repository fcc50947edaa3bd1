"""manage.py backup_database [--dir DIR]: a pg_dump of the site's database, as a new file.

Writes `arena-<UTC time>.dump` (pg_dump's custom format, without owners or grants, so it
restores under any role) into DIR, readable by its owner only, and prints its path. The
file appears under its final name only once complete. `restore_database` reads it.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.pg_tools import connection_args, tool


class Command(BaseCommand):
    help = "Dump the site's PostgreSQL database into a new file (pg_dump --format=custom)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dir", default="/var/backups/arena", help="where the dump goes")

    def handle(self, *args: Any, **options: Any) -> None:
        directory = Path(options["dir"])
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H%M%SZ")
        final = directory / f"arena-{stamp}.dump"
        partial = final.with_suffix(".dump.part")
        conn, env = connection_args()
        old_umask = os.umask(0o077)
        try:
            run = subprocess.run(  # noqa: S603 -- the site's own pg_dump and settings, no shell
                [tool("pg_dump"), "--format=custom", "--no-owner", "--no-acl", "--file", str(partial), *conn],
                env=env, capture_output=True, text=True,
            )  # fmt: skip
        finally:
            os.umask(old_umask)
        if run.returncode != 0:
            partial.unlink(missing_ok=True)
            raise CommandError(f"pg_dump failed: {run.stderr.strip()}")
        partial.rename(final)
        self.stdout.write(str(final))
