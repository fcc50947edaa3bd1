"""Page matrices and average win rates (analysis.matrices)."""

import numpy as np

from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, from_count_rows
from analysis.matrices import (
    average_win_rate,
    battle_count_matrix,
    predicted_win_rate_matrix,
    win_fraction_matrix,
)

ROWS = [
    ("x", "y", OUTCOME_A, 3),  # x on top beats y 3 times
    ("y", "x", OUTCOME_A, 1),  # y on top beats x once
    ("y", "x", OUTCOME_TIE, 2),
    ("x", "z", OUTCOME_B, 4),  # z (bottom) beats x 4 times
]


def test_counts_and_observed_win_fractions():
    g = from_count_rows(ROWS, models=["x", "y", "z", "idle"])
    n = battle_count_matrix(g)
    assert n.tolist() == [[0, 6, 4, 0], [6, 0, 0, 0], [4, 0, 0, 0], [0, 0, 0, 0]]
    w = win_fraction_matrix(g)
    assert w[0, 1] == (3 + 1) / 6 and w[1, 0] == (1 + 1) / 6  # ties count half
    assert w[0, 2] == 0.0 and w[2, 0] == 1.0
    assert np.isnan(w[1, 2]) and np.isnan(w[3, 3]) and np.all(np.isnan(np.diag(w)))
    met = np.isfinite(w)
    assert np.allclose((w + w.T)[met], 1.0)
    avg = average_win_rate(w)
    assert np.isclose(avg[0], ((4 / 6) + 0.0) / 2) and np.isnan(avg[3])


def test_predicted_win_rates():
    p = predicted_win_rate_matrix(np.array([1400.0, 1000.0, np.nan]))
    assert np.isclose(p[0, 1], 10 / 11) and np.isclose(p[1, 0], 1 / 11)
    assert np.all(np.isnan(p[2])) and np.all(np.isnan(p[:, 2])) and np.isnan(p[0, 0])
    assert np.allclose(average_win_rate(p)[:2], [10 / 11, 1 / 11])
