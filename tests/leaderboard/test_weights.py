"""RatingConfig.weights: the overall board fitted with inverse pair-count or inverse
propensity weights is the engine's weighted fit of the same battles; `none` is unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from analysis.grouping import group_battles
from analysis.leaderboard import compute_leaderboard
from analysis.weights import inverse_pair_count_weights, inverse_propensity_weights
from ingest.models import Battle, BattleKind, BattleSource, Privacy
from leaderboard.models import RatingConfig, SnapshotRow
from leaderboard.recompute import recompute
from tests.factories import ArenaModelFactory

KEYS = ("alpha", "beta", "gamma", "delta")
# Stored outcome codes: A (top) won, B (bottom) won.
A_WON, B_WON = 0, 1


def _battles(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Uneven pair counts and a latency-biased sampler: a pair drawn when it was fast
    (high probability) is won by the faster model (alpha) more often; a few votes carry no
    probability (pairs we did not serve)."""
    pairs = np.array([(0, 1), (0, 2), (1, 2), (0, 3), (2, 3), (1, 3)])
    share = np.array([0.45, 0.2, 0.15, 0.1, 0.06, 0.04])  # uneven pair counts
    pick = rng.choice(len(pairs), size=n, p=share)
    a, b = pairs[pick, 0].copy(), pairs[pick, 1].copy()
    fast = rng.random(n) < 0.5
    pi = np.where(fast, 0.4, 0.05)
    strength = np.array([0.6, 0.2, 0.0, -0.3])
    logit = strength[a] - strength[b] + np.where(fast & (a == 0), 1.2, 0.0)
    won_a = rng.random(n) < 1 / (1 + np.exp(-logit))
    swap = rng.random(n) < 0.5  # random top/bottom order
    a, b, won_a = np.where(swap, b, a), np.where(swap, a, b), np.where(swap, ~won_a, won_a)
    pi_or_none = np.where(rng.random(n) < 0.1, np.nan, pi)
    users = rng.integers(0, 40, size=n)
    return {"a": a, "b": b, "outcome": np.where(won_a, A_WON, B_WON), "pi": pi_or_none, "u": users}


@pytest.fixture
def arena(fast_config):
    fast_config.method = RatingConfig.Method.SANDWICH
    fast_config.min_model_votes = 1
    fast_config.slice_min_battles = 10**9  # the overall board only: keep it fast
    fast_config.save()
    models = [ArenaModelFactory(key=k) for k in KEYS]
    data = _battles(np.random.default_rng(3), 1500)
    Battle.objects.bulk_create(
        Battle(
            pair_id=f"w-{i}",
            user_hash=f"{int(data['u'][i]):064x}",
            model_a=models[int(data["a"][i])],
            model_b=models[int(data["b"][i])],
            outcome=int(data["outcome"][i]),
            kind=BattleKind.COMPLETION,
            privacy=Privacy.PRIVATE,
            source=BattleSource.API,
            content_hash=f"{i:064x}",
            pair_probability=None if np.isnan(data["pi"][i]) else float(data["pi"][i]),
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


def _max_shift(x: dict[str, float], y: dict[str, float]) -> float:
    return max(abs(x[k] - y[k]) for k in x)


def _ipw(data) -> np.ndarray:
    known = ~np.isnan(data["pi"])
    w = np.ones(len(data["pi"]))
    w[known] = inverse_propensity_weights(data["pi"][known], n_models=len(KEYS))
    return w


def test_default_none_is_the_unweighted_fit(client, arena):
    assert RatingConfig.current().weights == RatingConfig.Weights.NONE
    snapshot = recompute(trigger="test")
    assert _close(_published(snapshot), _expected(arena, None))
    assert snapshot.weights == "none"
    meta = client.get("/api/v1/leaderboard").json()["snapshot"]
    assert meta["weights"] == "none"


@pytest.mark.parametrize("intervals", ["clustered", "iid"])
def test_pair_count_weights_move_the_board_as_the_engine_predicts(arena, intervals):
    config = RatingConfig.current()
    config.intervals = intervals
    config.weights = RatingConfig.Weights.PAIR_COUNT
    config.save()
    snapshot = recompute(trigger="test")
    counts = group_battles(arena["a"], arena["b"], arena["outcome"], models=KEYS)
    weighted = inverse_pair_count_weights(counts, min_pair_count=50)
    board = compute_leaderboard(weighted, method="sandwich", shown=list(KEYS))
    expected = dict(zip(board.models, board.rating.tolist(), strict=True))
    found = _published(snapshot)
    assert _close(found, expected)
    assert _max_shift(found, _expected(arena, None)) > 3.0  # uneven counts: it matters
    assert snapshot.weights == "pair_count" and "inverse pair count" in snapshot.weights_label


@pytest.mark.parametrize(
    ("intervals", "vendor"),
    [("clustered", "postgresql"), ("iid", "postgresql"), ("clustered", "sqlite")],
)
def test_propensity_weights_are_the_engines_ipw_fit(client, arena, intervals, vendor, monkeypatch):
    config = RatingConfig.current()
    config.intervals = intervals
    config.weights = RatingConfig.Weights.PROPENSITY
    config.save()
    if vendor == "sqlite":  # the embedded path: counts and weights from a scan of the battles
        monkeypatch.setattr(connection, "vendor", "sqlite")
    snapshot = recompute(trigger="test")
    monkeypatch.undo()  # the pages below read PostgreSQL again (their SQL is PostgreSQL's)
    found = _published(snapshot)
    assert _close(found, _expected(arena, _ipw(arena)))
    unweighted = _expected(arena, None)
    # The sampler favoured alpha's fast (winning) moments: weighting pulls alpha down.
    assert found["alpha"] < unweighted["alpha"] - 5
    stored = int((~np.isnan(arena["pi"])).sum())
    assert snapshot.weights == "propensity"
    assert f"{stored:,} of {len(arena['pi']):,} votes" in snapshot.weights_label
    meta = client.get("/api/v1/leaderboard").json()["snapshot"]
    assert meta["weights"] == "propensity" and meta["weights_label"] == snapshot.weights_label
    page = client.get("/methodology/").content.decode()
    assert "inverse sampler propensity (" in page


def test_propensity_weights_keep_the_same_rating_whether_clustered_or_not(arena):
    config = RatingConfig.current()
    config.weights = RatingConfig.Weights.PROPENSITY
    config.save()
    clustered = _published(recompute(trigger="test"))
    config.intervals = RatingConfig.Intervals.IID
    config.save()
    assert _close(clustered, _published(recompute(trigger="test")), tol=1e-6)


def test_slices_stay_unweighted(arena, fast_config):
    fast_config.slice_min_battles = 10
    fast_config.save()
    plain = recompute(trigger="test")
    fast_config.weights = RatingConfig.Weights.PROPENSITY
    fast_config.save()
    weighted = recompute(trigger="test")

    def slice_rows(s) -> dict[str, float]:
        rows = SnapshotRow.objects.filter(slice__snapshot=s, slice__key="kind:completion")
        return {r.model.key: r.rating for r in rows.select_related("model")}

    assert slice_rows(plain) and slice_rows(plain) == slice_rows(weighted)
    assert _published(plain) != _published(weighted)


def test_admin_shows_the_option_with_its_help(admin_client, db):
    config = RatingConfig.current()
    page = admin_client.get(f"/admin/leaderboard/ratingconfig/{config.pk}/change/")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'name="weights"' in html and "Inverse sampler propensity" in html
    assert "votes of pairs we did not serve weigh 1" in html
