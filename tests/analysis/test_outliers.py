"""The Chatbot Arena outlier score against hand computation and a simulation."""

from __future__ import annotations

import math

import numpy as np

from analysis.outliers import merge_counts, outlier_scores


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


def _arena_rows(rng, *, honest_users=300, votes_each=40, n_models=11):
    """Honest votes per (user, top, bottom, top won): Bradley-Terry on a spread of ratings."""
    strength = np.linspace(1.0, -1.0, n_models)
    rows = []
    for u in range(honest_users):
        for _ in range(votes_each):
            top, bottom = rng.choice(n_models, 2, replace=False)
            p_top = 1 / (1 + np.exp(strength[bottom] - strength[top]))
            rows.append((u, top, bottom, int(rng.random() < p_top)))
    return rows


def _grouped(rows):
    """One row per (user, ordered pair, outcome), as the database groups them, coded as the
    outlier test codes a choice (0 = lower id won, 1 = higher id won)."""
    arr = np.array(rows)
    keys, counts = np.unique(arr, axis=0, return_counts=True)
    user, top, bottom, top_won = keys.T
    lo, hi = np.minimum(top, bottom), np.maximum(top, bottom)
    winner = np.where(top_won == 1, top, bottom)
    return user, lo * 100 + hi, (winner == hi).astype(int), counts


def test_a_one_sided_prolific_voter_is_flagged_however_the_rows_are_split():
    rng = np.random.default_rng(7)
    rows = _arena_rows(rng)
    target, attacker = 5, 10_000  # the middle of the board
    for i in range(1000):  # the target wins every one of its battles, shown top or bottom
        other = int(rng.choice([m for m in range(11) if m != target]))
        top, bottom = (target, other) if i % 2 else (other, target)
        rows.append((attacker, top, bottom, int(top == target)))
    user, pair, choice, count = _grouped(rows)
    # The same (user, pair, choice) arrives as two rows, one per top/bottom order.
    assert len(user) > len(set(zip(user.tolist(), pair.tolist(), choice.tolist(), strict=True)))
    s = outlier_scores(user, pair, choice, count)
    i = list(s.user).index(attacker)
    assert s.votes[i] == 1000
    # Merged: e^8.8, above the threshold of 20; row by row (the old input) it was e^-392.
    assert s.log_score[i] > math.log(20.0) + 5
    flagged = s.flagged(min_votes=5, threshold=20.0)
    assert flagged[i]
    assert flagged.sum() <= 0.03 * 301  # honest users are rarely flagged
    # Merging first is what makes this: the same counts pre-merged score the same.
    merged = outlier_scores(*merge_counts(user, pair, choice, count))
    assert np.allclose(merged.log_score, s.log_score)


def test_merge_counts_sums_repeated_cells():
    u, p, c, n = merge_counts(
        np.array([1, 1, 2, 1]),
        np.array([5, 5, 5, 5]),
        np.array([0, 0, 0, 1]),
        np.array([2, 3, 1, 4]),
    )
    assert list(zip(u.tolist(), p.tolist(), c.tolist(), n.tolist(), strict=True)) == [
        (1, 5, 0, 5.0),
        (1, 5, 1, 4.0),
        (2, 5, 0, 1.0),
    ]
