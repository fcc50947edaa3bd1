"""The Chatbot Arena outlier score against hand computation and a simulation."""

from __future__ import annotations

import math

import numpy as np

from analysis.outliers import outlier_scores


def test_hand_computed_case():
    # pair 0: others chose 0 three times and 1 once; user 9 chose 1 twice.
    user = np.array([1, 2, 3, 4, 9])
    pair = np.array([0, 0, 0, 0, 0])
    choice = np.array([0, 0, 0, 1, 1])
    count = np.array([1, 1, 1, 1, 2])
    s = outlier_scores(user, pair, choice, count)
    i = list(s.user).index(9)
    # others: 4 votes on the pair, 1 of them chose 1 -> p = 1/4, 1/(2p) = 2 per vote
    assert s.votes[i] == 2
    assert math.isclose(s.log_score[i], 2 * math.log(2.0))
    j = list(s.user).index(1)
    # user 1 chose 0; others (5 votes excluding user 1's) chose 0 twice -> p = 2/5
    assert math.isclose(s.log_score[j], math.log(1 / (2 * 0.4)))


def test_votes_on_pairs_nobody_else_voted_on_do_not_count():
    s = outlier_scores(np.array([1, 2]), np.array([0, 1]), np.array([0, 0]), np.array([5, 5]))
    assert s.votes.tolist() == [0, 0] and s.log_score.tolist() == [0.0, 0.0]


def test_contrarian_is_flagged_and_honest_users_are_not():
    rng = np.random.default_rng(4)
    n_users, n_pairs = 400, 30
    truth = rng.uniform(0.55, 0.9, n_pairs)  # chance the lower id wins each pair
    rows = []
    for u in range(n_users):
        for _ in range(20):
            p = rng.integers(n_pairs)
            win_lower = rng.random() < truth[p]
            if u == 0:  # always picks the usual loser
                win_lower = truth[p] < 0.5
            rows.append((u, p, 0 if win_lower else 1))
    arr = np.array(rows)
    s = outlier_scores(arr[:, 0], arr[:, 1], arr[:, 2], np.ones(len(arr)))
    flagged = s.flagged(min_votes=5, threshold=20.0)
    assert flagged[list(s.user).index(0)]
    assert flagged.sum() <= 0.02 * n_users + 1  # honest users are rarely flagged
