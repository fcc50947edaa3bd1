"""The count tables rebuilt from every battle in SQL (leaderboard/rebuild.py) and the nightly
reconciliation, against counts of the battles done here in Python.

The rebuild is what `recompute_leaderboard --full`, a crash's rebuild and a failed
reconciliation run; the property test of test_incremental.py ends each sequence with one.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from ingest.models import Battle, BattleSource, Outcome
from ingest.simulation import simulate
from leaderboard import incremental, rebuild
from leaderboard.aggregation import DIMENSIONS
from leaderboard.models import AggregationState, BattleMark, CellTotal, UserGroupCellTotal
from tests.factories import ArenaModelFactory, BattleFactory
from tests.leaderboard.test_incremental import assert_counts_right, user_keys

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


def truth_days() -> tuple[Counter, Counter]:
    """The per-day rows (DayCell, DayUserCell) counted here from the non-excluded battles."""
    rows = list(
        Battle.objects.filter(excluded=False).values_list(
            "received_at", "user_hash", "model_a_id", "model_b_id", "outcome", *DIMENSIONS, "source"
        )
    )
    key = user_keys({r[1] for r in rows})
    cells: Counter = Counter()
    users: Counter = Counter()
    for received_at, user, a, b, o, *values, source in rows:
        day = received_at.astimezone(UTC).date()
        simulated = "simulated" if source == BattleSource.SIMULATED else "other"
        for dimension, value in [
            ("all", ""),
            *zip(DIMENSIONS, values, strict=True),
            ("source", simulated),
        ]:
            cells[day, dimension, value, a, b, o] += 1
        users[day, key[user], a, b, o] += 1
    return cells, users


@pytest.mark.parametrize(("seed", "users"), [(0, 3), (1, 40), (2, 400)])
def test_the_rebuild_counts_every_battle(db, settings, seed, users):
    # 40 users with a limit of 30: the per-user totals are not kept; 3 users: they are.
    settings.ARENA_MAX_USER_CLUSTERS = 30
    make_battles(random.Random(seed), 600, users=users)
    assert incremental.refresh(full=True).full
    assert_counts_right()
    rebuilt = tables()
    cells, per_user = truth_days()
    assert Counter({r[:-1]: r[-1] for r in rebuilt["leaderboard_daycell"]}) == cells
    assert Counter({r[:-1]: r[-1] for r in rebuilt["leaderboard_dayusercell"]}) == per_user
    assert AggregationState.objects.get().user_cells_current == (users <= 30)
    assert bool(rebuilt["leaderboard_usercelltotal"]) == (users <= 30)
    assert len(rebuilt["leaderboard_dayusercell"]) > 100
    languages = {row[1] for row in rebuilt["leaderboard_celltotal"] if row[0] == "language"}
    assert set(LANGUAGES) <= languages
    incremental.refresh(full=True)
    assert tables() == rebuilt


def test_no_battles_at_all(db):
    incremental.refresh(full=True)
    assert all(rows == [] for rows in tables().values())
    assert incremental.reconcile().mismatched == 0


def test_reconcile_counts_the_differences(db):
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


@pytest.mark.django_db(transaction=True)
def test_a_failed_rebuild_leaves_the_marks_and_the_next_refresh_counts_right(monkeypatch):
    make_battles(random.Random(10), 200, users=30)
    incremental.refresh(full=True)
    first = Battle.objects.filter(excluded=False).order_by("id")[:1]
    Battle.objects.filter(id__in=list(first.values_list("id", flat=True))).update(excluded=True)
    marked = set(BattleMark.objects.values_list("day", flat=True))
    before = tables()

    def fail(cursor):  # after every table was emptied and counted again
        raise RuntimeError("the rebuild failed")

    monkeypatch.setattr(rebuild, "keeps_user_cells", fail)
    with pytest.raises(RuntimeError):
        incremental.refresh(full=True)
    assert tables() == before  # rolled back with the refresh
    assert set(BattleMark.objects.values_list("day", flat=True)) == marked
    monkeypatch.undo()
    assert not incremental.refresh().full
    assert_counts_right()
