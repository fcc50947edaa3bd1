"""Bootstrap and sandwich intervals (analysis.intervals): invariances, agreement, coverage."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from analysis.bradley_terry import fit_bt
from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, GroupedCounts, from_count_rows
from analysis.intervals import bootstrap, sandwich
from analysis.scale import SCALE
from analysis.simulate import simulate_battles

TRUE = np.linspace(850.0, 1150.0, 8)
TRUTH = TRUE - TRUE.mean() + 1000.0  # the truth on the mean-1000 scale


@pytest.fixture(scope="module")
def data():
    return simulate_battles(TRUE, 20_000, tie_rate=0.1, seed=21).grouped()


def test_same_seed_same_intervals_other_seed_other_intervals(data):
    fit = fit_bt(data)
    b1, b2 = bootstrap(fit, rounds=300, seed=5), bootstrap(fit, rounds=300, seed=5)
    b3 = bootstrap(fit, rounds=300, seed=6)
    assert np.array_equal(b1.lower, b2.lower) and np.array_equal(b1.upper, b2.upper)
    assert np.array_equal(b1.samples, b2.samples)
    assert not np.array_equal(b1.lower, b3.lower)
    assert bootstrap(fit, seed=0).rounds == 1000  # the default
    assert b1.samples.shape == (300, len(TRUE))


def test_bootstrap_rounds_converge_and_centre_on_the_fit(data):
    fit = fit_bt(data)
    b = bootstrap(fit, rounds=400, seed=1)
    assert b.diagnostics["max_grad_norm"] < 1e-8
    assert np.all(b.lower < fit.rating) and np.all(fit.rating < b.upper)
    assert np.max(np.abs(b.median - fit.rating)) < 0.15 * np.min(b.upper - b.lower)


def test_per_round_anchor_interval_is_the_anchor_value(data):
    fit = fit_bt(data, anchor="model-003", anchor_value=1000.0, anchor_mode="per_round")
    for iv in (bootstrap(fit, rounds=200, seed=0), sandwich(fit)):
        assert iv.lower[3] == 1000.0 == iv.upper[3] and iv.median[3] == 1000.0
        others = np.arange(len(TRUE)) != 3
        assert np.all(iv.upper[others] - iv.lower[others] > 1.0)


def test_shift_anchor_moves_the_mean_normalised_board_by_one_constant(data):
    mean_fit = fit_bt(data)
    fit = fit_bt(data, anchor="model-003", anchor_value=1000.0)  # default anchor_mode="shift"
    assert fit.rating[3] == 1000.0
    offset = fit.rating - mean_fit.rating
    assert np.allclose(offset, offset[0], atol=1e-9, rtol=0)
    for method in (lambda f: bootstrap(f, rounds=300, seed=4), sandwich):
        iv, iv_mean = method(fit), method(mean_fit)
        for field in ("lower", "upper", "median"):
            assert np.allclose(getattr(iv, field) - getattr(iv_mean, field), offset[0], atol=1e-9)
        assert iv.lower[3] < 1000.0 < iv.upper[3]  # the anchor keeps an interval of its own


def _scaled(g: GroupedCounts, factor: int) -> GroupedCounts:
    return GroupedCounts(models=g.models, a=g.a, b=g.b, outcome=g.outcome, count=factor * g.count)


def test_doubling_counts_shrinks_widths_by_sqrt2(data):
    fit, fit2 = fit_bt(data), fit_bt(_scaled(data, 2))
    s, s2 = sandwich(fit), sandwich(fit2)
    assert np.allclose((s.upper - s.lower) / (s2.upper - s2.lower), np.sqrt(2), rtol=1e-9)
    b, b2 = bootstrap(fit, rounds=1000, seed=3), bootstrap(fit2, rounds=1000, seed=3)
    ratio = (b.upper - b.lower) / (b2.upper - b2.lower)
    assert abs(np.mean(ratio) - np.sqrt(2)) < 0.05


def test_swapping_sides_gives_identical_intervals(data):
    flip = np.array([OUTCOME_B, OUTCOME_A, OUTCOME_TIE])
    swapped = GroupedCounts(
        models=data.models, a=data.b, b=data.a, outcome=flip[data.outcome], count=data.count
    )
    b, bs = (
        bootstrap(fit_bt(data), rounds=200, seed=2),
        bootstrap(fit_bt(swapped), rounds=200, seed=2),
    )
    assert np.allclose(b.lower, bs.lower, atol=1e-9) and np.allclose(b.upper, bs.upper, atol=1e-9)
    s, ss = sandwich(fit_bt(data)), sandwich(fit_bt(swapped))
    assert np.allclose(s.lower, ss.lower, atol=1e-9) and np.allclose(s.upper, ss.upper, atol=1e-9)


def test_bootstrap_and_sandwich_agree_on_large_data():
    g = simulate_battles(TRUE, 200_000, tie_rate=0.1, seed=4).grouped()
    fit = fit_bt(g)
    b, s = bootstrap(fit, rounds=1000, seed=0), sandwich(fit)
    wb, ws = b.upper - b.lower, s.upper - s.lower
    assert np.all(np.abs(wb / ws - 1) < 0.12)
    assert abs(np.mean(wb / ws) - 1) < 0.04


def _lbfgs_round(a, b, y, w, k):
    """Straightforward per-round fit (independent of the engine): L-BFGS on weighted rows."""

    def loss(theta):
        z = theta[a] - theta[b]
        r = w * (y - expit(z))
        grad = np.bincount(a, weights=-r, minlength=k) + np.bincount(b, weights=r, minlength=k)
        return -(w * (y * log_expit(z) + (1 - y) * log_expit(-z))).sum(), grad

    res = minimize(
        loss,
        np.zeros(k),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-11, "ftol": 0, "maxiter": 1000},
    )
    return res.x - res.x.mean()


def test_bootstrap_equals_per_round_lbfgs_on_the_same_draws():
    g = simulate_battles(np.linspace(900, 1100, 12), 30_000, tie_rate=0.1, seed=9).grouped()
    rounds = 60
    draws = np.random.default_rng(0).multinomial(g.total, g.count / g.total, size=rounds)
    y = np.select([g.outcome == OUTCOME_A, g.outcome == OUTCOME_B], [1.0, 0.0], 0.5)
    ref = np.array([_lbfgs_round(g.a, g.b, y, d / g.total, 12) for d in draws])
    ref = 1000.0 + SCALE * ref
    engine = bootstrap(fit_bt(g), draws=draws)
    assert engine.rounds == rounds
    assert np.max(np.abs(engine.samples - ref)) < 0.01


def test_unbounded_models_get_one_sided_intervals():
    rows = [
        ("a", "b", OUTCOME_A, 30), ("a", "b", OUTCOME_B, 20), ("b", "c", OUTCOME_A, 25),
        ("b", "c", OUTCOME_B, 25), ("c", "a", OUTCOME_A, 15), ("c", "a", OUTCOME_B, 30),
        ("top", "a", OUTCOME_A, 3), ("new", "b", OUTCOME_TIE, 1),
    ]  # fmt: skip
    fit = fit_bt(from_count_rows(rows))
    top = fit.models.index("top")
    bounded = np.arange(len(fit.models)) != top
    b, s = bootstrap(fit, rounds=500, seed=0), sandwich(fit)
    for iv in (b, s):
        assert np.all(np.isfinite(iv.lower)) and np.all(np.isfinite(iv.upper[bounded]))
        assert np.all(iv.lower <= fit.rating + 1e-9) and np.all(fit.rating <= iv.upper + 1e-9)
        # three wins over "a" and no loss: no upper bound, and a lower bound from the data
        # alone (three straight wins have probability 2.5% when sigma(d)^3 = 0.025, i.e.
        # 154 points below "a"), far below the rating the virtual tie gives
        d = SCALE * np.log(0.025 ** (1 / 3) / (1 - 0.025 ** (1 / 3)))
        assert iv.upper[top] == np.inf
        assert abs(iv.lower[top] - fit.rating[fit.models.index("a")] - d) < 1e-6
        assert iv.lower[top] < fit.rating[top] - 400
    # "new" tied once: in about 1 - 1/e of rounds it has no battle, or the tie (its only
    # link) is redrawn away; those rounds use a smaller core and are still solved
    assert b.diagnostics["other_core_rounds"] > 100
    assert b.diagnostics["max_grad_norm"] < 1e-8


def test_top_slot_interval():
    g = simulate_battles(TRUE, 50_000, tie_rate=0.05, top_slot_p=0.82, seed=8).grouped()
    fit = fit_bt(g, position_bias=True)
    b, s = bootstrap(fit, rounds=500, seed=1), sandwich(fit)
    for lo, hi, _ in (b.top_slot, s.top_slot):
        assert lo < 0.82 < hi and hi - lo < 0.02
    assert bootstrap(fit_bt(g), rounds=50).top_slot is None


def _coverage(n_sims: int, position_bias: bool, anchor: str | None = None) -> dict[str, float]:
    """Pooled coverage of the truth; an anchor is pinned per round (truth relative to it)."""
    hits = {"bootstrap": 0, "sandwich": 0, "top_bootstrap": 0, "top_sandwich": 0}
    total = 0
    top_p = 0.75 if position_bias else 0.5
    for seed in range(n_sims):
        g = simulate_battles(TRUE, 4000, tie_rate=0.1, top_slot_p=top_p, seed=1000 + seed).grouped()
        fit = fit_bt(g, position_bias=position_bias, anchor=anchor, anchor_mode="per_round")
        truth = TRUTH if anchor is None else TRUE - TRUE[g.index(anchor)] + 1000.0
        keep = np.ones(len(TRUE), dtype=bool) if anchor is None else np.array(g.models) != anchor
        for name, iv in (
            ("bootstrap", bootstrap(fit, rounds=1000, seed=seed)),
            ("sandwich", sandwich(fit)),
        ):
            hits[name] += int(np.sum(((iv.lower <= truth) & (truth <= iv.upper))[keep]))
            if position_bias:
                lo, hi, _ = iv.top_slot
                hits["top_" + name] += int(lo <= top_p <= hi)
        total += int(keep.sum())
    out = {k: hits[k] / total for k in ("bootstrap", "sandwich")}
    if position_bias:
        out |= {k: hits[k] / n_sims for k in ("top_bootstrap", "top_sandwich")}
    return out


@pytest.mark.slow
def test_coverage_of_95_percent_intervals_over_200_simulations():
    cov = _coverage(200, position_bias=False)
    assert 0.90 <= cov["bootstrap"] <= 0.99, cov
    assert 0.90 <= cov["sandwich"] <= 0.99, cov


@pytest.mark.slow
def test_coverage_with_anchor_and_with_position_bias():
    cov = _coverage(200, position_bias=False, anchor="model-002")
    assert 0.90 <= cov["bootstrap"] <= 0.99, cov
    assert 0.90 <= cov["sandwich"] <= 0.99, cov
    cov = _coverage(200, position_bias=True)
    for key in ("bootstrap", "sandwich", "top_bootstrap", "top_sandwich"):
        assert 0.90 <= cov[key] <= 0.99, cov
