"""Stop `make test` at once, with instructions, when PostgreSQL or Redis does not answer."""

from __future__ import annotations

import os
import sys

import psycopg
import redis
from environ import Env

HOW = (
    "Start them with `docker compose up -d db redis` (or your system's services; on the "
    "project's CI machines `.ci/run` starts them), or point DATABASE_URL / REDIS_URL elsewhere."
)


def main() -> int:
    db = Env.db_url_config(os.environ["DATABASE_URL"])
    problems = []
    try:
        psycopg.connect(
            host=db["HOST"] or None,
            port=db["PORT"] or None,
            user=db["USER"] or None,
            password=db["PASSWORD"] or None,
            dbname="postgres",
            connect_timeout=3,
        ).close()
    except Exception as exc:
        problems.append(f"PostgreSQL at {db['HOST']}:{db['PORT'] or 5432} does not answer: {exc}")
    try:
        redis.Redis.from_url(os.environ["REDIS_URL"], socket_connect_timeout=3).ping()
    except Exception as exc:
        problems.append(f"Redis at {os.environ['REDIS_URL']} does not answer: {exc}")
    for problem in problems:
        print(f"make test: {problem}", file=sys.stderr)
    if problems:
        print(f"make test: {HOW}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
