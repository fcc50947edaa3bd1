"""manage.py restore_database DUMP --yes: replace the site's database with a backup.

Stop the web, pairs, worker and beat processes first. Every object the dump holds is
dropped and restored from it in one transaction (`pg_restore --clean --if-exists
--single-transaction`): a failed restore leaves the database as it was. Then `migrate`
brings a backup older than the code up to date, and the processes can start again; the
board published in the backup is served as it was. Works on an emptied or new database
too (created by the operator, owned by the site's role).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from core.pg_tools import connection_args, tool


class Command(BaseCommand):
    help = "Restore the site's PostgreSQL database from a backup_database dump (replaces it)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dump", type=Path)
        parser.add_argument("--yes", action="store_true", help="confirm: the database is replaced")

    def handle(self, *args: Any, **options: Any) -> None:
        dump: Path = options["dump"]
        if not dump.is_file():
            raise CommandError(f"{dump}: no such file")
        if not options["yes"]:
            raise CommandError("This replaces the site's database with the dump: add --yes.")
        connections.close_all()
        conn, env = connection_args()
        run = subprocess.run(  # noqa: S603 -- the site's own pg_dump/pg_restore and settings, no shell
            [tool("pg_restore"), "--clean", "--if-exists", "--no-owner", "--no-acl",
             "--single-transaction", "--exit-on-error", *conn, str(dump)],
            env=env, capture_output=True, text=True,
        )  # fmt: skip
        if run.returncode != 0:
            raise CommandError(f"pg_restore failed (nothing changed): {run.stderr.strip()}")
        self.stdout.write(f"Restored {dump}; now run migrate, then start the processes.")
