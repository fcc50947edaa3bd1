"""This process's copy of the user-group totals (leaderboard/group_cache.py): it follows the
refreshes it is handed and is never served at a version that is not the table's."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from django.db import transaction

from ingest.models import Battle
from leaderboard import group_cache, incremental
from leaderboard.models import AggregationState, UserGroupCellTotal
from tests.factories import ArenaModelFactory
from tests.leaderboard.test_incremental import _vote


def as_counter(columns) -> Counter:
    return Counter({tuple(r[:4]): r[4] for r in zip(*(c.tolist() for c in columns), strict=True)})


def test_follow_applies_changes_inserts_and_deletions():
    rng = np.random.default_rng(1)
    truth: Counter = Counter()
    for _ in range(400):
        truth[(int(rng.integers(4096)), int(rng.integers(1, 60)), int(rng.integers(1, 60)),
               int(rng.integers(4)))] += int(rng.integers(1, 9))  # fmt: skip
    cols = [np.array([k[i] for k in truth], dtype=np.int64) for i in range(4)]
    group_cache.store("v1", (*cols, np.array(list(truth.values()), dtype=np.int64)))
    version = "v1"
    for step in range(30):
        rows = []
        for key in rng.permutation(list(truth))[:20]:
            key = tuple(int(x) for x in key)
            truth[key] = 0 if rng.random() < 0.3 else int(rng.integers(1, 50))
            rows.append((*key, truth[key]))
        for _ in range(10):  # keys new to the copy
            key = (int(rng.integers(4096)), int(rng.integers(60, 900)), 5, int(rng.integers(4)))
            truth[key] = int(rng.integers(1, 9))
            rows.append((*key, truth[key]))
        group_cache.follow(before=version, after=f"v{step + 2}", rows=rows)
        version = f"v{step + 2}"
        truth = Counter({k: n for k, n in truth.items() if n})
        got = group_cache.read(version)
        assert got is not None and as_counter(got) == truth
        assert np.all(np.diff(group_cache._copy.keys) > 0)  # sorted, unique
    assert group_cache.read("v1") is None  # an older version is not served
    group_cache.follow(before="elsewhere", after="v99", rows=[])
    assert group_cache.read("v99") is None  # it was not at the version replaced: dropped


@pytest.fixture
def arena(db):
    ids = [m.pk for m in ArenaModelFactory.create_batch(4)]
    rng = random.Random(3)
    Battle.objects.bulk_create(_vote(rng, ids, days_ago=rng.choice([0, 2, 5])) for _ in range(200))
    incremental.refresh()
    return ids, rng


def table_rows() -> Counter:
    rows = UserGroupCellTotal.objects.values_list(
        "user_group", "model_a", "model_b", "outcome", "count"
    )
    return Counter({tuple(r[:4]): r[4] for r in rows})


def test_a_change_made_elsewhere_is_read_from_the_table(arena):
    ids, rng = arena
    incremental.read_user_cell_arrays(groups=incremental.GROUPS)  # this process's copy
    version = AggregationState.objects.get().group_version
    assert group_cache.read(version) is not None
    # Another process's refresh: new battles counted there, a new version, nothing handed here.
    Battle.objects.bulk_create([_vote(rng, ids) for _ in range(30)])
    incremental.refresh()
    other = AggregationState.objects.get().group_version
    group_cache.store(version, group_cache.read(other))  # as if this process had missed it
    assert group_cache.read(other) is None
    got = incremental.read_user_cell_arrays(groups=incremental.GROUPS)
    assert as_counter(got) == table_rows()


def test_a_rolled_back_refresh_leaves_no_copy_of_its_counts(arena):
    ids, rng = arena
    incremental.read_user_cell_arrays(groups=incremental.GROUPS)
    before = table_rows()
    with pytest.raises(RuntimeError), transaction.atomic():
        Battle.objects.bulk_create([_vote(rng, ids) for _ in range(30)])
        incremental.refresh()
        raise RuntimeError("the recompute failed after its refresh")
    assert table_rows() == before
    got = incremental.read_user_cell_arrays(groups=incremental.GROUPS)
    assert as_counter(got) == before


def test_a_rebuild_drops_the_copy(arena):
    incremental.read_user_cell_arrays(groups=incremental.GROUPS)
    incremental.refresh(full=True)
    assert group_cache._copy is None
    got = incremental.read_user_cell_arrays(groups=incremental.GROUPS)
    assert as_counter(got) == table_rows()
