"""The battle simulator (analysis.simulate)."""

import numpy as np
import pytest

from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE
from analysis.simulate import simulate_battles


def test_reproducible_and_well_formed():
    s1 = simulate_battles({"x": 1000, "y": 1100, "z": 900}, 5000, tie_rate=0.1, seed=3)
    s2 = simulate_battles({"x": 1000, "y": 1100, "z": 900}, 5000, tie_rate=0.1, seed=3)
    s3 = simulate_battles({"x": 1000, "y": 1100, "z": 900}, 5000, tie_rate=0.1, seed=4)
    assert s1.models == ("x", "y", "z") and len(s1) == 5000
    assert np.array_equal(s1.outcome, s2.outcome) and np.array_equal(s1.a, s2.a)
    assert not np.array_equal(s1.outcome, s3.outcome)
    assert np.all(s1.a != s1.b)
    assert set(np.unique(s1.outcome).tolist()) == {OUTCOME_A, OUTCOME_B, OUTCOME_TIE}
    assert s1.grouped().total == 5000
    assert s1.model_a()[:3] == [s1.models[i] for i in s1.a[:3]]


def test_rates_match_the_model():
    n = 400_000
    s = simulate_battles(np.array([1000.0, 1000.0]), n, tie_rate=0.1, top_slot_p=0.8, seed=1)
    top_wins = np.mean(s.outcome == OUTCOME_A)
    ties = np.mean(s.outcome == OUTCOME_TIE)
    # equal models: expected score of the top slot is top_slot_p, ties at tie_rate
    assert abs(ties - 0.1) < 0.003
    assert abs(top_wins + ties / 2 - 0.8) < 0.003
    assert abs(np.mean(s.a == 0) - 0.5) < 0.003  # positions are a fair coin

    s = simulate_battles(np.array([1200.0, 1000.0]), n, tie_rate=0.1, seed=2)
    p = 1 / (1 + 10 ** (-200 / 400))
    first_on_top = s.a == 0
    score0 = np.where(s.outcome == OUTCOME_TIE, 0.5, (s.outcome == OUTCOME_A) == first_on_top)
    assert abs(score0.mean() - p) < 0.003  # ties as half a win: expected score is exactly p


def test_pair_weights_and_validation():
    w = np.zeros((3, 3))
    w[0, 1] = 1.0
    s = simulate_battles(np.array([1000.0, 1050.0, 990.0]), 2000, pair_weights=w, seed=0)
    assert set(np.unique(np.minimum(s.a, s.b) * 3 + np.maximum(s.a, s.b)).tolist()) == {1}
    for kwargs in ({"tie_rate": 1.0}, {"top_slot_p": 0.0}, {"pair_weights": np.ones(5)}):
        with pytest.raises(ValueError):
            simulate_battles(np.array([1000.0, 1000.0, 1000.0]), 10, seed=0, **kwargs)
    with pytest.raises(ValueError):
        simulate_battles(np.array([1000.0]), 10, seed=0)


def test_default_names_and_million_battles():
    s = simulate_battles(np.linspace(900, 1100, 100), 1_000_000, tie_rate=0.1, seed=0)
    assert s.models[0] == "model-000" and s.models[-1] == "model-099"
    assert len(s) == 1_000_000 and s.grouped().total == 1_000_000
