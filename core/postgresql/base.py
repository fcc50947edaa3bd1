"""Django's PostgreSQL backend, with one change to its psycopg pool's health check.

After a PostgreSQL restart or failover every idle pooled connection is dead. psycopg_pool
checks them one at a time as clients take them and waits longer after each failed check, so
a process holding several idle connections spends its first request's whole pool timeout
on dead ones and answers 503. Here the first failed check has the pool check every idle
connection at once (`ConnectionPool.check`, which replaces the broken ones), so the request's
next attempt gets a new connection.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base
from psycopg import Connection
from psycopg_pool import ConnectionPool


def _check_all_on_failure(pool: ConnectionPool[Any]) -> Any:
    def check(conn: Connection[Any]) -> None:
        try:
            ConnectionPool.check_connection(conn)
        except Exception:
            pool.check()
            raise

    return check


class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self) -> ConnectionPool[Any] | None:
        pool: ConnectionPool[Any] | None = super().pool
        # Django creates the pool with psycopg_pool's own check when CONN_HEALTH_CHECKS is on.
        if pool is not None and pool._check is ConnectionPool.check_connection:
            pool._check = _check_all_on_failure(pool)
        return pool
