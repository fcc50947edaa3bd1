"""RatingConfig's per-user influence bound: the published board is the engine's fit with
``analysis.weights.influence_weights``; a flood from one account counts like the cap, and a
user's repeated context counts once."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from django.utils import timezone

from analysis.grouping import group_battles
from analysis.leaderboard import compute_leaderboard
from analysis.weights import dedup_weights, influence_weights
from ingest.models import Battle, BattleKind, BattleSource, Privacy
from leaderboard.models import RatingConfig, SnapshotRow
from leaderboard.recompute import recompute
from tests.factories import ArenaModelFactory

KEYS = ("alpha", "beta", "gamma")
A_WON, B_WON = 0, 1
FLOOD = 600  # one account's votes, alpha over beta, over three days


def _arena(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """300 honest users with four votes each (beta a little stronger), and one flood."""
    n = 1200
    pairs = np.array([(0, 1), (0, 2), (1, 2)])
    pick = rng.integers(0, 3, n)
    a, b = pairs[pick, 0], pairs[pick, 1]
    strength = np.array([0.0, 0.3, -0.2])
    won_a = rng.random(n) < 1 / (1 + np.exp(-(strength[a] - strength[b])))
    user = np.repeat(np.arange(300), 4)
    day = rng.integers(0, 3, n)
    context = np.arange(n)
    return {
        "a": np.r_[a, np.zeros(FLOOD, dtype=np.int64)],
        "b": np.r_[b, np.ones(FLOOD, dtype=np.int64)],
        "outcome": np.r_[np.where(won_a, A_WON, B_WON), np.full(FLOOD, A_WON)],
        "user": np.r_[user, np.full(FLOOD, 300)],
        "day": np.r_[day, np.arange(FLOOD) % 3],
        # the flood repeats five contexts
        "context": np.r_[context, n + np.arange(FLOOD) % 5],
    }


@pytest.fixture
def arena(fast_config):
    fast_config.method = RatingConfig.Method.SANDWICH
    fast_config.min_model_votes = 1
    fast_config.slice_min_battles = 10**9
    fast_config.save()
    models = [ArenaModelFactory(key=k) for k in KEYS]
    data = _arena(np.random.default_rng(7))
    start = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)
    Battle.objects.bulk_create(
        Battle(
            pair_id=f"c-{i}",
            user_hash=f"{int(data['user'][i]):064x}",
            model_a=models[int(data["a"][i])],
            model_b=models[int(data["b"][i])],
            outcome=int(data["outcome"][i]),
            kind=BattleKind.COMPLETION,
            privacy=Privacy.PRIVATE,
            source=BattleSource.API,
            content_hash=f"{i:064x}",
            context_hash=f"{int(data['context'][i]):016x}",
            received_at=start - dt.timedelta(days=int(data["day"][i])),
        )
        for i in range(len(data["a"]))
    )
    return data


def _published(snapshot) -> dict[str, float]:
    rows = SnapshotRow.objects.filter(slice__snapshot=snapshot, slice__key="overall")
    return {r.model.key: r.rating for r in rows.select_related("model")}


def _expected(data, weight: np.ndarray | None) -> dict[str, float]:
    counts = group_battles(data["a"], data["b"], data["outcome"], models=KEYS, weight=weight)
    board = compute_leaderboard(counts, method="sandwich", shown=list(KEYS))
    return dict(zip(board.models, board.rating.tolist(), strict=True))


def _close(found: dict[str, float], expected: dict[str, float], tol: float = 1e-4) -> bool:
    return found.keys() == expected.keys() and all(abs(found[k] - expected[k]) < tol for k in found)


def _configure(*, day: int, total: int, dedup: bool, intervals: str = "clustered") -> None:
    config = RatingConfig.current()
    config.user_cap_day, config.user_cap_total, config.dedup_contexts = day, total, dedup
    config.intervals = intervals
    config.save()


def test_the_bound_is_on_by_default():
    config = RatingConfig()
    assert (config.user_cap_day, config.user_cap_total, config.dedup_contexts) == (50, 200, True)


@pytest.mark.parametrize("intervals", ["clustered", "iid"])
def test_the_default_cap_publishes_the_engines_capped_fit(arena, intervals):
    _configure(day=50, total=200, dedup=True, intervals=intervals)
    snapshot = recompute(trigger="test")
    base = dedup_weights(arena["user"], arena["context"])
    w = influence_weights(arena["user"], arena["day"], cap_day=50, cap_total=200, base=base)
    assert w[-FLOOD:].sum() <= 50 * 3 + 1e-9  # the flood weighs at most its daily caps
    assert np.all(w[:-FLOOD] == 1.0)  # honest users below the caps: untouched
    found = _published(snapshot)
    assert _close(found, _expected(arena, w))
    assert "per-user bound" in snapshot.weights_label


def test_the_cap_undoes_most_of_a_floods_gain(arena):
    _configure(day=0, total=0, dedup=False)
    off = _published(recompute(trigger="test"))
    assert _close(off, _expected(arena, None))  # no bound: the plain fit
    _configure(day=0, total=20, dedup=False)
    capped = _published(recompute(trigger="test"))
    honest = _expected({k: v[:-FLOOD] for k, v in arena.items()}, None)
    lead = {name: b["alpha"] - b["beta"] for name, b in (("off", off), ("capped", capped),
                                                          ("honest", honest))}  # fmt: skip
    assert lead["off"] > lead["honest"] + 100  # the flood buys alpha the lead
    assert lead["capped"] < lead["honest"] + 0.2 * (lead["off"] - lead["honest"])


def test_repeated_contexts_of_one_user_count_once(arena):
    _configure(day=0, total=0, dedup=True)
    found = _published(recompute(trigger="test"))
    w = dedup_weights(arena["user"], arena["context"])
    assert w[-FLOOD:].sum() == pytest.approx(5.0)  # five contexts
    assert _close(found, _expected(arena, w))
