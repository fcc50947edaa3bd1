"""The count tables rebuilt in memory (leaderboard/full_count.py) equal the SQL rebuild.

The in-memory count is what `recompute_leaderboard --full`, a crash's rebuild and the nightly
reconciliation use; the GROUP BYs in SQL (kept for arenas above
ARENA_REBUILD_IN_MEMORY_MAX_BATTLES) are the reference here, compared table by table.
"""

from __future__ import annotations

import random
import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from ingest.models import Battle, BattleSource, Outcome
from ingest.simulation import simulate
from leaderboard import full_count, incremental, rebuild
from leaderboard.models import AggregationState, BattleMark, CellTotal, UserGroupCellTotal
from tests.factories import ArenaModelFactory, BattleFactory
from tests.leaderboard.test_incremental import assert_counts_right

TABLES = {
    "leaderboard_daycell": "day, dimension, value, model_a, model_b, outcome, count",
    "leaderboard_celltotal": "dimension, value, model_a, model_b, outcome, count",
    "leaderboard_dayusercell": "day, user_key, model_a, model_b, outcome, count",
    "leaderboard_usertotal": "user_key, count",
    "leaderboard_usergroupcelltotal": "user_group, model_a, model_b, outcome, count",
    "leaderboard_usercelltotal": "user_key, model_a, model_b, outcome, count",
}
# Values a count must carry through unchanged: empty, non-ASCII, the longest allowed.
LANGUAGES = ["python", "", "español-ñ", "日本語", "x" * 32, "c"]


def tables() -> dict[str, list[tuple]]:
    out = {}
    with connection.cursor() as cursor:
        for table, columns in TABLES.items():
            cursor.execute(f"SELECT {columns} FROM {table} ORDER BY {columns}")
            out[table] = cursor.fetchall()
    return out


def make_battles(rng: random.Random, n: int, *, users: int) -> None:
    ids = [m.pk for m in ArenaModelFactory.create_batch(5)]
    battles = []
    for _ in range(n):
        a, b = rng.sample(ids, 2)
        battles.append(
            BattleFactory.build(
                model_a_id=a,
                model_b_id=b,
                outcome=rng.choice(list(Outcome)),
                user_hash=f"user-{rng.randrange(users)}",
                language=rng.choice(LANGUAGES),
                task_type=rng.choice(["function", "", "other"]),
                natural_language=rng.choice(["en", "zh", ""]),
                context_bucket=rng.choice(["<1k", "1k-4k", ">16k"]),
                kind=rng.choice(["completion", "edit"]),
                source=rng.choice([BattleSource.API, BattleSource.EXTENSION]),
                excluded=rng.random() < 0.1,
                received_at=timezone.now() - timedelta(days=rng.choice([0, 1, 2, 40, 400, 9000])),
            )
        )
    Battle.objects.bulk_create(battles)
    simulate(battles=50, seed=rng.randrange(1000))  # source "simulated"


@pytest.mark.parametrize(("seed", "users"), [(0, 3), (1, 40), (2, 400)])
def test_the_count_in_memory_equals_the_count_in_sql(db, settings, seed, users):
    # 40 users with a limit of 30: the per-user totals are not kept; 3 users: they are.
    settings.ARENA_MAX_USER_CLUSTERS = 30
    make_battles(random.Random(seed), 600, users=users)
    settings.ARENA_REBUILD_IN_MEMORY_MAX_BATTLES = 0  # 0: always in SQL
    incremental.refresh(full=True)
    in_sql, kept = tables(), AggregationState.objects.get().user_cells_current
    settings.ARENA_REBUILD_IN_MEMORY_MAX_BATTLES = 10**9
    incremental.refresh(full=True)
    assert tables() == in_sql
    assert AggregationState.objects.get().user_cells_current == kept == (users <= 30)
    assert len(in_sql["leaderboard_dayusercell"]) > 100
    languages = {row[1] for row in in_sql["leaderboard_celltotal"] if row[0] == "language"}
    assert set(LANGUAGES) <= languages
    assert_counts_right()


def test_no_battles_at_all(db):
    incremental.refresh(full=True)
    assert all(rows == [] for rows in tables().values())
    assert incremental.reconcile().mismatched == 0


@pytest.mark.parametrize("in_memory", [True, False])
def test_reconcile_finds_the_same_differences_either_way(db, settings, in_memory):
    settings.ARENA_REBUILD_IN_MEMORY_MAX_BATTLES = 10**9 if in_memory else 0
    make_battles(random.Random(7), 300, users=50)
    incremental.refresh(full=True)
    assert incremental.reconcile().mismatched == 0
    cell = CellTotal.objects.order_by("id").first()
    cell.count += 1
    cell.save()
    UserGroupCellTotal.objects.order_by("id").last().delete()
    # 2 for the changed cell (its wrong row and its right one), 1 for the lost group row
    assert incremental.reconcile().mismatched == 3
    assert incremental.reconcile().mismatched == 0  # rebuilt


def test_a_battle_changed_between_the_two_reads_is_noticed(db, monkeypatch):
    """Outside REPEATABLE READ a relabel between the COPY and the naming of the slice
    combinations would name counts wrongly: it is refused instead."""
    make_battles(random.Random(8), 50, users=5)
    real = full_count.read_ints

    def read_then_relabel(*args, **kwargs):
        out = real(*args, **kwargs)
        Battle.objects.update(task_type="docstring")
        return out

    monkeypatch.setattr(full_count, "read_ints", read_then_relabel)
    with pytest.raises(full_count.BattlesChanged), connection.cursor() as cursor:
        full_count.read(cursor)


@pytest.mark.django_db(transaction=True)
def test_a_rebuild_of_its_own_counts_the_users_on_a_second_connection(settings, monkeypatch):
    settings.ARENA_MAX_USER_CLUSTERS = 20
    make_battles(random.Random(9), 400, users=60)
    backends = []
    real = rebuild._write_users

    def write_users(cursor, battles):
        backends.append(connection.connection.info.backend_pid)
        return real(cursor, battles)

    monkeypatch.setattr(rebuild, "_write_users", write_users)
    assert incremental.refresh(full=True).full
    assert backends and backends[0] != connection.connection.info.backend_pid
    assert_counts_right()
    assert not AggregationState.objects.get().user_cells_current  # 60 users > 20


@pytest.mark.django_db(transaction=True)
def test_a_failed_half_leaves_the_marks_and_the_next_refresh_counts_right(monkeypatch):
    make_battles(random.Random(10), 200, users=30)
    incremental.refresh(full=True)
    first = Battle.objects.filter(excluded=False).order_by("id")[:1]
    Battle.objects.filter(id__in=list(first.values_list("id", flat=True))).update(excluded=True)
    marked = set(BattleMark.objects.values_list("day", flat=True))
    before = tables()

    def fail(cursor, battles):
        raise RuntimeError("the users' half failed")

    monkeypatch.setattr(rebuild, "_write_users", fail)
    with pytest.raises(RuntimeError):
        incremental.refresh(full=True)
    assert tables() == before  # the cells' half was rolled back with the refresh
    assert set(BattleMark.objects.values_list("day", flat=True)) == marked
    monkeypatch.undo()
    assert not incremental.refresh().full
    assert_counts_right()


@pytest.mark.django_db(transaction=True)
def test_a_committed_half_with_a_failed_refresh_is_counted_again(monkeypatch):
    """The users' half commits on its own connection; if the refresh then fails, its days
    stay marked and are counted again, so nothing is counted twice or lost."""
    make_battles(random.Random(11), 200, users=30)
    incremental.refresh(full=True)
    first = Battle.objects.filter(excluded=False).order_by("id")[:3]
    Battle.objects.filter(id__in=list(first.values_list("id", flat=True))).update(excluded=True)

    def fail(cursor, battles):
        raise RuntimeError("the cells' half failed")

    monkeypatch.setattr(rebuild, "_write_cells", fail)
    with pytest.raises(RuntimeError):
        incremental.refresh(full=True)
    assert BattleMark.objects.exists()
    monkeypatch.undo()
    incremental.refresh()
    assert_counts_right()
    with transaction.atomic():
        assert incremental.reconcile().mismatched == 0


@pytest.mark.django_db(transaction=True)
def test_the_parts_are_read_on_two_connections_in_one_snapshot(monkeypatch):
    """Battles committed while the parts are read are in neither part (both read the first
    connection's snapshot), and the next refresh counts them."""
    make_battles(random.Random(12), 200, users=30)
    incremental.refresh(full=True)
    expected = tables()
    real, backends = full_count.read_part, set()

    def read_part(cursor, *, part, parts):
        backends.add(connection.connection.info.backend_pid)
        if part == 1:  # two new battles (one of them with an odd id: this part's), committed
            thread = threading.Thread(target=commit_two_battles)
            thread.start()
            thread.join()
        return real(cursor, part=part, parts=parts)

    def commit_two_battles():
        try:
            a, b = ArenaModelFactory.create_batch(2)
            Battle.objects.bulk_create(
                [
                    BattleFactory.build(model_a=a, model_b=b),
                    BattleFactory.build(model_a=b, model_b=a),
                ]
            )
        finally:
            connection.close()

    monkeypatch.setattr(full_count, "read_part", read_part)
    incremental.refresh(full=True)
    assert len(backends) == 2
    assert tables() == expected  # the new battles were not read by either part
    monkeypatch.undo()
    assert BattleMark.objects.exists()
    incremental.refresh()
    assert_counts_right()
