"""The maintained per-day battle counts (leaderboard/incremental.py) equal a full count.

The property test applies random sequences of what changes battles -- live votes, imports
of old days (COPY), exclusions and restores through moderation, merges and unmerges,
relabelling, moved and deleted battles -- and after every step refreshes the counts
incrementally and compares them with a count of the battles done here in Python.
"""

from __future__ import annotations

import io
import logging
import random
import threading
from collections import Counter
from datetime import UTC, timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection, connections, transaction
from django.utils import timezone

from catalogue.models import ArenaModel
from catalogue.services import merge_model, unmerge_model
from ingest.models import Battle, BattleSource, Outcome
from ingest.simulation import delete_simulated, simulate
from leaderboard import group_cache, incremental
from leaderboard.aggregation import DIMENSIONS, aggregate
from leaderboard.models import (
    AggregationState,
    BattleMark,
    CellTotal,
    UserCellTotal,
    UserGroupCellTotal,
    UserTotal,
)
from moderation.services import set_excluded
from tests.factories import ArenaModelFactory, BattleFactory


def truth_cells() -> Counter:
    """Non-excluded battles counted by the count tables' key (dimension, value, A, B,
    outcome), straight from the rows: each battle once overall, once per dimension."""
    rows = Battle.objects.filter(excluded=False).values_list(
        "model_a_id", "model_b_id", "outcome", *DIMENSIONS, "source"
    )
    out: Counter = Counter()
    for a, b, o, *values, source in rows:
        out["all", "", a, b, o] += 1
        for dim, value in zip(DIMENSIONS, values, strict=True):
            out[dim, value, a, b, o] += 1
        kind = "simulated" if source == BattleSource.SIMULATED else "other"
        out["source", kind, a, b, o] += 1
    return out


def user_keys(hashes: set[str]) -> dict[str, int]:
    """The maintained tables' user key of each user (PostgreSQL's hashtextextended)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT u, hashtextextended(u, 0) FROM unnest(%s::text[]) AS u", [sorted(hashes)]
        )
        return dict(cursor.fetchall())


def truth_users() -> Counter:
    rows = list(
        Battle.objects.filter(excluded=False).values_list(
            "user_hash", "model_a_id", "model_b_id", "outcome"
        )
    )
    key = user_keys({r[0] for r in rows})
    return Counter((key[u], a, b, o) for u, a, b, o in rows)


def maintained() -> tuple[Counter, Counter]:
    cells, _ = incremental.read_cells()
    users = incremental.read_user_cells()
    return Counter({r[:-1]: r[-1] for r in cells}), Counter({r[:-1]: r[-1] for r in users})


def assert_counts_right(after: str = "") -> None:
    cells, users = maintained()
    assert cells == truth_cells(), after
    assert users == truth_users(), after
    per_user: Counter = Counter()
    for (user, *_), n in truth_users().items():
        per_user[user] += n
    assert dict(UserTotal.objects.values_list("user_key", "count")) == per_user, after
    # users in fixed groups (key mod GROUPS; Python's % is never negative, as the SQL's)
    groups: Counter = Counter()
    for (user, a, b, o), n in truth_users().items():
        groups[(user % incremental.GROUPS, a, b, o)] += n
    grouped = incremental.read_user_cells(groups=incremental.GROUPS)
    assert Counter({r[:-1]: r[-1] for r in grouped}) == groups, after
    assert all(n > 0 for *_, n in grouped), after
    # and this process's copy of them (group_cache), followed through every refresh
    arrays = incremental.read_user_cell_arrays(groups=incremental.GROUPS)
    assert sorted(zip(*(a.tolist() for a in arrays), strict=True)) == sorted(grouped), after


def _vote(rng: random.Random, model_ids: list[int], *, days_ago: int = 0) -> Battle:
    a, b = rng.sample(model_ids, 2)
    return BattleFactory.build(
        model_a_id=a,
        model_b_id=b,
        outcome=rng.choice([Outcome.A, Outcome.B, Outcome.TIE, Outcome.BOTH_BAD]),
        user_hash=f"user-{rng.randrange(6)}",
        language=rng.choice(["python", "go", "rust"]),
        task_type=rng.choice(["function", "other"]),
        received_at=timezone.now() - timedelta(days=days_ago, minutes=rng.randrange(600)),
    )


class Arena:
    """The operations of the property test, each a real write path of the product."""

    def __init__(self, rng: random.Random, admin) -> None:
        self.rng, self.admin = rng, admin
        self.merged: list[ArenaModel] = []

    def ids(self) -> list[int]:
        return list(ArenaModel.objects.values_list("id", flat=True))

    def live_votes(self) -> None:
        Battle.objects.bulk_create(
            [_vote(self.rng, self.ids()) for _ in range(self.rng.randrange(1, 6))]
        )

    def old_votes(self) -> None:
        Battle.objects.bulk_create(
            [
                _vote(self.rng, self.ids(), days_ago=self.rng.randrange(1, 40))
                for _ in range(self.rng.randrange(1, 6))
            ]
        )

    def copy_import(self) -> None:
        simulate(battles=self.rng.randrange(5, 30), seed=self.rng.randrange(10**6))

    def _some(self) -> list[int]:
        ids = list(Battle.objects.values_list("id", flat=True))
        return self.rng.sample(ids, min(len(ids), self.rng.randrange(1, 8)))

    def exclude(self, exclude: bool = True) -> None:
        set_excluded(
            battles=Battle.objects.filter(id__in=self._some()),
            exclude=exclude,
            reason="property test",
            actor=self.admin,
            target="test",
        )

    def restore(self) -> None:
        self.exclude(exclude=False)

    def merge(self) -> None:
        free = list(ArenaModel.objects.filter(merged_into__isnull=True))
        if len(free) > 2:
            source, target = self.rng.sample(free, 2)
            merge_model(source=source, target=target, reason="property test", actor=self.admin)
            self.merged.append(source)

    def unmerge(self) -> None:
        if self.merged:
            source = self.merged.pop()
            source.refresh_from_db()
            unmerge_model(source=source, reason="property test", actor=self.admin)

    def relabel(self) -> None:
        Battle.objects.filter(id__in=self._some()).update(
            task_type=self.rng.choice(["function", "docstring", "other"]),
            language=self.rng.choice(["python", "c"]),
        )

    def move_day(self) -> None:
        Battle.objects.filter(id__in=self._some()).update(
            received_at=timezone.now() - timedelta(days=self.rng.randrange(0, 60))
        )

    def delete(self) -> None:
        if self.rng.random() < 0.5:
            delete_simulated()
        else:
            Battle.objects.filter(id__in=self._some()).delete()

    def rolled_back(self) -> None:
        """Writes of a transaction that fails change nothing (and mark nothing that counts)."""
        try:
            with transaction.atomic():
                self.old_votes()
                self.exclude()
                raise RuntimeError("abort")
        except RuntimeError:
            pass

    OPERATIONS = (
        "live_votes",
        "old_votes",
        "copy_import",
        "exclude",
        "restore",
        "merge",
        "unmerge",
        "relabel",
        "move_day",
        "delete",
        "rolled_back",
    )


@pytest.mark.parametrize("seed", range(8))
def test_incremental_counts_equal_a_full_count_after_every_step(models, admin_user, seed, settings):
    rng = random.Random(seed)
    # Odd seeds: so few users allowed one by one that the per-user totals are not kept most
    # of the time (the arena's users cross the limit both ways as battles come and go).
    settings.ARENA_MAX_USER_CLUSTERS = 4 if seed % 2 else 4096
    arena = Arena(rng, admin_user)
    incremental.refresh()
    assert_counts_right()
    kept = set()  # were the per-user totals kept after each step
    for _ in range(14):
        operation = rng.choice(Arena.OPERATIONS)
        getattr(arena, operation)()
        done = incremental.refresh()
        assert not done.full
        # the copy was followed, not read again (a refresh that counted nothing keeps it)
        assert group_cache.read(AggregationState.objects.get().group_version) is not None
        assert_counts_right(after=operation)
        kept.add(AggregationState.objects.get().user_cells_current)
    # Odd seeds went both ways: per-user totals dropped, then rebuilt from the day rows.
    assert kept == ({False, True} if seed % 2 else {True})
    # Every table, day rows included, is what the SQL rebuild from the battles makes.
    from tests.leaderboard.test_rebuild import tables

    maintained_tables = tables()
    assert incremental.refresh(full=True).full
    assert tables() == maintained_tables
    # The engine's input agrees too: the incremental cells are the scan's cells.
    cells = aggregate()
    assert cells.battles == sum(
        n for (d, _, a, b, _), n in truth_cells().items() if d == "all" and _target(a) != _target(b)
    )


def _target(pk: int) -> int:
    model = ArenaModel.objects.get(pk=pk)
    return model.merged_into_id or pk


@pytest.mark.django_db(transaction=True)  # marks of the test's own open transaction stay
def test_the_changed_days_are_counted_again_and_old_marks_cleared(models, admin_user):
    ids = [m.pk for m in models.values()]
    rng = random.Random(1)
    Battle.objects.bulk_create([_vote(rng, ids, days_ago=d) for d in range(10)])
    assert incremental.refresh().full  # first run: built from scratch
    # The UTC days the battles were received on (a vote "3 days ago" minus some minutes can
    # fall on the day before, depending on the time of day the test runs).
    utc_day = lambda battle: battle.received_at.astimezone(UTC).date()  # noqa: E731
    new = [_vote(rng, ids, days_ago=3), _vote(rng, ids, days_ago=3)]
    Battle.objects.bulk_create(new)
    assert {utc_day(b) for b in new} <= set(incremental.refresh().days)
    old = Battle.objects.filter(received_at__lt=timezone.now() - timedelta(days=8))
    old_days = {utc_day(b) for b in old}
    set_excluded(battles=old, exclude=True, reason="r", actor=admin_user, target="t")
    counted = incremental.refresh().days
    assert old_days and old_days <= set(counted)
    assert (timezone.now() - timedelta(days=30)).date() not in counted
    assert_counts_right()
    # Every mark a refresh saw is gone, and with nothing changed nothing is counted again.
    assert not BattleMark.objects.exists()
    assert incremental.refresh().days == ()


def test_reconcile_finds_a_wrong_total_logs_it_and_repairs_it(models, caplog):
    ids = [m.pk for m in models.values()]
    rng = random.Random(2)
    Battle.objects.bulk_create([_vote(rng, ids, days_ago=d % 4) for d in range(40)])
    incremental.refresh()
    assert incremental.reconcile().mismatched == 0
    cell = CellTotal.objects.order_by("id").first()
    cell.count += 3  # e.g. a write that bypassed the trigger
    cell.save()
    with caplog.at_level(logging.ERROR, logger="leaderboard.incremental"):
        done = incremental.reconcile()
    assert done.mismatched == 2 and done.full  # that cell's wrong row, and its right one
    assert "differ from a full count" in caplog.text
    assert_counts_right()
    assert AggregationState.objects.get().last_mismatch == 2


def test_recompute_full_command_rebuilds(models):
    ids = [m.pk for m in models.values()]
    rng = random.Random(3)
    Battle.objects.bulk_create([_vote(rng, ids, days_ago=d % 5) for d in range(60)])
    call_command("recompute_leaderboard", stdout=io.StringIO())
    CellTotal.objects.all().delete()  # counts lost: only a full recount brings them back
    call_command("recompute_leaderboard", "--full", stdout=io.StringIO())
    assert_counts_right()
    assert AggregationState.objects.get().rebuilt_at is not None


@pytest.mark.django_db(transaction=True)
def test_a_vote_committing_after_a_refresh_began_is_counted_by_the_next(models):
    """The mark of a transaction still open during a refresh is not lost with the old marks."""
    ids = [m.pk for m in models.values()]
    incremental.refresh()
    inserted, release, done = threading.Event(), threading.Event(), threading.Event()

    def slow_vote() -> None:
        try:
            with transaction.atomic():
                Battle.objects.bulk_create([_vote(random.Random(4), ids, days_ago=20)])
                inserted.set()
                assert release.wait(120)
        finally:
            connections.close_all()
            done.set()

    thread = threading.Thread(target=slow_vote)
    thread.start()
    assert inserted.wait(120)
    incremental.refresh()  # cannot see the open transaction's battle nor its mark
    release.set()
    assert done.wait(120)
    thread.join()
    assert BattleMark.objects.exists()
    incremental.refresh()
    assert_counts_right()
    assert sum(n for key, n in maintained()[0].items() if key[0] == "all") == 1


@pytest.mark.django_db(transaction=True)
def test_reconcile_outside_a_transaction_uses_one_snapshot(models):
    ids = [m.pk for m in models.values()]
    Battle.objects.bulk_create([_vote(random.Random(5), ids) for _ in range(20)])
    done = incremental.reconcile()
    assert done.mismatched == 0 and done.full  # never built before: built, then checked
    assert_counts_right()


def test_count_tables_emptied_by_a_crash_are_rebuilt(models):
    """They are unlogged: crash recovery truncates them, and the next refresh sees it."""
    ids = [m.pk for m in models.values()]
    Battle.objects.bulk_create([_vote(random.Random(6), ids, days_ago=d) for d in range(5)])
    incremental.refresh()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relpersistence FROM pg_class WHERE relname = %s", [CellTotal._meta.db_table]
        )
        assert cursor.fetchone()[0] == "u"
        cursor.execute(
            "TRUNCATE leaderboard_daycell, leaderboard_celltotal, leaderboard_dayusercell, "
            "leaderboard_usercelltotal, leaderboard_usertotal"
        )
    assert incremental.refresh().full
    assert_counts_right()


def test_many_users_per_user_totals_not_kept_yet_read_and_reconciled(models, settings):
    """Above ARENA_MAX_USER_CLUSTERS users the per-user totals are emptied and not kept; the
    per-user reads sum the day rows, the fixed groups and user counts stay maintained, and
    the reconciliation still checks them against the battles."""
    ids = [m.pk for m in models.values()]
    rng = random.Random(8)
    Battle.objects.bulk_create([_vote(rng, ids, days_ago=d % 3) for d in range(60)])
    incremental.refresh()
    settings.ARENA_MAX_USER_CLUSTERS = 2
    Battle.objects.bulk_create([_vote(rng, ids)])
    incremental.refresh()
    assert not AggregationState.objects.get().user_cells_current
    assert not UserCellTotal.objects.exists()
    assert_counts_right()
    assert incremental.reconcile().mismatched == 0
    group = UserGroupCellTotal.objects.order_by("id").first()
    group.count += 1
    group.save()
    done = incremental.reconcile()
    assert done.mismatched == 2 and done.full
    assert_counts_right()
    settings.ARENA_MAX_USER_CLUSTERS = 4096  # few users again: rebuilt by the next refresh
    Battle.objects.bulk_create([_vote(rng, ids)])
    incremental.refresh()
    assert AggregationState.objects.get().user_cells_current
    assert UserCellTotal.objects.exists()
    assert_counts_right()


def test_user_cells_read_as_arrays_equal_the_rows(db):
    """The array read (read_user_cell_arrays) gives the same rows as the plain one,
    per user, per fixed group (the rollup) and per other grouping."""
    ids = [m.pk for m in ArenaModelFactory.create_batch(3)]
    rng = random.Random(5)
    Battle.objects.bulk_create(_vote(rng, ids, days_ago=rng.choice([0, 1, 9])) for _ in range(300))
    incremental.refresh()
    for groups in (None, incremental.GROUPS, 7):
        rows = sorted(incremental.read_user_cells(groups=groups))
        arrays = incremental.read_user_cell_arrays(groups=groups)
        assert all(a.dtype == np.int64 for a in arrays)
        assert sorted(zip(*(a.tolist() for a in arrays), strict=True)) == rows
        assert len(rows) > 10
