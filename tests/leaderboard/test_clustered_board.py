"""The overall board's intervals are clustered by user by default; ratings do not change."""

from __future__ import annotations

import numpy as np
import pytest

from catalogue.models import ArenaModel
from ingest.models import Battle
from leaderboard.aggregation import aggregate, overall_by_user
from leaderboard.models import RatingConfig, SnapshotRow
from leaderboard.recompute import recompute


def _rows(snapshot, key: str) -> dict[str, tuple]:
    return {
        r.model.key: (r.rating, r.ci_lower, r.ci_upper)
        for r in SnapshotRow.objects.filter(
            slice__snapshot=snapshot, slice__key=key, public=True
        ).select_related("model")
    }


def test_user_rows_sum_to_the_overall_counts(simulated):
    cells = aggregate()
    keys = dict(ArenaModel.objects.values_list("id", "key"))
    overall = cells.grouped(None, keys, min_votes=1)
    by_user = overall_by_user(overall, keys)
    assert by_user.user is not None
    assert len(np.unique(by_user.user)) == Battle.objects.values("user_hash").distinct().count()
    total = lambda g: {  # noqa: E731
        (int(a), int(b), int(o)): 0 for a, b, o in zip(g.a, g.b, g.outcome, strict=True)
    }
    sums = total(overall)
    for a, b, o, c in zip(by_user.a, by_user.b, by_user.outcome, by_user.count, strict=True):
        sums[(int(a), int(b), int(o))] += int(c)
    assert sums == {
        (int(a), int(b), int(o)): int(c)
        for a, b, o, c in zip(overall.a, overall.b, overall.outcome, overall.count, strict=True)
    }


def test_clustered_by_default_same_ratings_other_intervals(client, simulated):
    config = RatingConfig.current()
    assert config.intervals == RatingConfig.Intervals.CLUSTERED
    clustered = recompute(trigger="test")
    users = Battle.objects.values("user_hash").distinct().count()
    assert clustered.intervals == f"clustered by {users:,} users"
    config.intervals = RatingConfig.Intervals.IID
    config.save()
    iid = recompute(trigger="test")
    assert iid.intervals == "independent votes"
    a, b = _rows(clustered, "overall"), _rows(iid, "overall")
    assert a.keys() == b.keys() and len(a) >= 5
    for key in a:
        assert a[key][0] == pytest.approx(b[key][0], abs=1e-6)  # the same fit
    assert any(abs(a[k][1] - b[k][1]) > 1e-6 for k in a)  # the intervals are another method's
    # Slices keep independent-vote intervals either way: identical.
    slice_key = "task_type:frontend"
    assert _rows(clustered, slice_key) == _rows(iid, slice_key)
    page = client.get("/methodology/").content.decode()
    assert "clustered by user" in page


def test_methodology_names_the_current_boards_intervals(client, simulated):
    recompute(trigger="test")
    page = client.get("/methodology/").content.decode()
    assert "The current board" in page and "clustered by" in page


def _cell_sums(g) -> dict[tuple[int, int, int], int]:
    sums: dict[tuple[int, int, int], int] = {}
    for a, b, o, c in zip(g.a, g.b, g.outcome, g.count, strict=True):
        sums[(int(a), int(b), int(o))] = sums.get((int(a), int(b), int(o)), 0) + int(c)
    return sums


def test_user_rows_read_in_groups_hold_the_same_battles(simulated):
    cells = aggregate()
    keys = dict(ArenaModel.objects.values_list("id", "key"))
    overall = cells.grouped(None, keys, min_votes=1)
    by_user = overall_by_user(overall, keys)
    grouped = overall_by_user(overall, keys, groups=8)
    assert grouped.user is not None and len(np.unique(grouped.user)) == 8
    assert _cell_sums(grouped) == _cell_sums(by_user) == _cell_sums(overall)


def test_many_users_are_resampled_in_groups(simulated, settings):
    users = Battle.objects.values("user_hash").distinct().count()
    plain = recompute(trigger="test")
    settings.ARENA_MAX_USER_CLUSTERS = 8
    grouped = recompute(trigger="test")
    assert grouped.intervals == (f"clustered by {users:,} users (resampled in 8 fixed groups)")
    a, b = _rows(plain, "overall"), _rows(grouped, "overall")
    assert a.keys() == b.keys()
    for key in a:
        assert a[key][0] == pytest.approx(b[key][0], abs=1e-6)  # the same fit
    assert any(abs(a[k][1] - b[k][1]) > 1e-6 for k in a)  # resampled in other units


def test_userless_battles_leave_their_group_and_spread_over_all(simulated, settings):
    ids = list(Battle.objects.order_by("id").values_list("id", flat=True)[::3])
    Battle.objects.filter(id__in=ids).update(user_hash="")
    cells = aggregate()
    assert cells.userless == len(ids)
    assert (
        cells.users == Battle.objects.exclude(user_hash="").values("user_hash").distinct().count()
    )
    keys = dict(ArenaModel.objects.values_list("id", "key"))
    overall = cells.grouped(None, keys, min_votes=1)
    for groups in (None, 8):
        split = overall_by_user(overall, keys, groups=groups)
        assert _cell_sums(split) == _cell_sums(overall)
    grouped = overall_by_user(overall, keys, groups=8)
    per_group = np.bincount(grouped.user, weights=grouped.count)
    # a third of the battles in one group of eight would be the giant user again
    assert len(per_group) == 8 and per_group.max() < 1.5 * per_group.mean(), per_group
    settings.ARENA_MAX_USER_CLUSTERS = 8
    snap = recompute(trigger="test")
    assert snap.userless_battles == len(ids)
    assert f"with {len(ids):,} battles without a user as independent votes" in snap.intervals
