"""The personal leaderboard: exact against an independent implementation, gated like the
original server, and choosing lam sensibly for simulated users whose taste differs from the
crowd's by a known amount."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.grouping import GroupedCounts
from analysis.personal import (
    DEFAULT_L2,
    CrowdBoard,
    UserVotes,
    as_payload,
    cv_loss,
    fit_scores,
    personal_history,
)
from analysis.simulate import simulate_battles
from tests.analysis import personal_reference as ref

MODELS = ("m0", "m1", "m2", "m3", "m4", "m5")
N_USER = 200
CROWD = np.array([1150.0, 1090.0, 1030.0, 970.0, 910.0, 850.0])


def crowd_counts(n: int = 20_000, seed: int = 1) -> GroupedCounts:
    return simulate_battles(dict(zip(MODELS, CROWD, strict=True)), n, seed=seed).grouped()


def user_votes(ratings: np.ndarray, n: int, seed: int) -> UserVotes:
    sim = simulate_battles(dict(zip(MODELS, ratings, strict=True)), n, seed=seed)
    return UserVotes(sim.a.astype(np.int64), sim.b.astype(np.int64), sim.outcome.astype(np.int64))


def taste(delta: float) -> np.ndarray:
    """A user ``delta`` of the way from the crowd's order to its reverse (2 = reversed)."""
    return CROWD - delta * (CROWD - CROWD.mean())


def rows(counts: GroupedCounts) -> list[tuple[int, int, int, int]]:
    return list(
        zip(
            counts.a.tolist(),
            counts.b.tolist(),
            counts.outcome.tolist(),
            counts.count.tolist(),
            strict=True,
        )
    )


def vote_list(votes: UserVotes, end: int | None = None) -> list[tuple[int, int, int]]:
    return list(
        zip(
            votes.a[:end].tolist(),
            votes.b[:end].tolist(),
            votes.outcome[:end].tolist(),
            strict=True,
        )
    )


@pytest.fixture(scope="module")
def small():
    counts = crowd_counts(2_000, seed=3)
    votes = user_votes(taste(1.5), 45, seed=4)
    return counts, CrowdBoard(counts), votes


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_fit_matches_an_independent_implementation(small, lam):
    counts, crowd, votes = small
    board = fit_scores(crowd, votes, lam)
    theta = ref.fit(len(MODELS), rows(counts), vote_list(votes), lam, DEFAULT_L2)
    expected = dict(zip(MODELS, ref.ratings(theta, list(range(len(MODELS)))), strict=True))
    for score in board.scores:
        assert score.elo == pytest.approx(expected[score.model], abs=1e-4)


def test_held_out_loss_matches_an_independent_implementation(small):
    counts, crowd, votes = small
    lams = [0.0, 0.25, 0.9, 1.0]
    expected = [
        ref.heldout_loss(len(MODELS), rows(counts), vote_list(votes), lam, DEFAULT_L2)
        for lam in lams
    ]
    assert cv_loss(crowd, votes, lams) == pytest.approx(expected, abs=1e-8)


def test_history_is_the_specified_search_and_fits(small):
    counts, crowd, votes = small
    history = personal_history(crowd, votes)
    lam, loss = ref.search(len(MODELS), rows(counts), vote_list(votes), DEFAULT_L2)
    assert [b.n_votes for b in history] == [20, 45]  # one list per 20 votes, the last has all
    for board in history:
        assert board.lam == pytest.approx(lam, abs=1e-12) and board.cv_loss == pytest.approx(
            loss, abs=1e-8
        )
        theta = ref.fit(len(MODELS), rows(counts), vote_list(votes, board.n_votes), lam, DEFAULT_L2)
        expected = dict(zip(MODELS, ref.ratings(theta, list(range(len(MODELS)))), strict=True))
        assert {s.model: s.elo for s in board.scores} == pytest.approx(expected, abs=1e-4)
    # Never worse on the held-out votes than either extreme.
    assert loss <= min(cv_loss(crowd, votes, [0.0, 1.0])) + 1e-12


def test_gates_like_the_original_server(small):
    _counts, crowd, votes = small
    assert personal_history(crowd, UserVotes(votes.a[:19], votes.b[:19], votes.outcome[:19])) == []
    assert [
        b.n_votes
        for b in personal_history(crowd, UserVotes(votes.a[:20], votes.b[:20], votes.outcome[:20]))
    ] == [20]
    same = UserVotes(votes.a, votes.b, np.zeros_like(votes.outcome))  # always the top one
    assert personal_history(crowd, same) == []
    assert [b.n_votes for b in personal_history(crowd, votes, min_votes=30)] == [45]
    assert [b.n_votes for b in personal_history(crowd, votes, interval=10)] == [20, 30, 45]
    assert personal_history(crowd, votes, min_votes=46) == []


def test_rows_count_the_users_votes_and_list_every_model_with_battles():
    counts = crowd_counts(3_000, seed=5)
    # A seventh model the crowd never saw but the user did; an eighth nobody saw.
    wide = GroupedCounts(
        models=(*MODELS, "new", "unseen"),
        a=counts.a,
        b=counts.b,
        outcome=counts.outcome,
        count=counts.count,
    )
    crowd = CrowdBoard(wide)
    rng = np.random.default_rng(6)
    a = rng.integers(0, 7, 60)
    b = (a + rng.integers(1, 7, 60)) % 7
    votes = UserVotes(
        a.astype(np.int64), b.astype(np.int64), rng.integers(0, 2, 60).astype(np.int64)
    )
    (board, last) = personal_history(crowd, votes, interval=30)
    for b_, end in ((board, 30), (last, 60)):
        expected = np.bincount(votes.a[:end], minlength=8) + np.bincount(votes.b[:end], minlength=8)
        got = {s.model: s.votes for s in b_.scores}
        assert got == {m: int(expected[i]) for i, m in enumerate(wide.models) if m != "unseen"}
        elos = [s.elo for s in b_.scores]
        assert elos == sorted(elos, reverse=True) and np.mean(elos) == pytest.approx(1000.0)
    payload = as_payload([board, last])
    assert [len(p) for p in payload] == [7, 7]
    assert set(payload[1][0]) == {"model", "elo", "votes"} and payload[1][0]["elo"] == round(
        last.scores[0].elo, 2
    )


def future_loss(board, ratings: np.ndarray, seed: int) -> float:
    """Mean log-loss of the board's predictions on 20,000 new votes of the same user."""
    new = user_votes(ratings, 20_000, seed)
    elo = {s.model: s.elo for s in board.scores}
    e = np.array([elo[m] for m in MODELS])
    p = 1.0 / (1.0 + 10.0 ** ((e[new.b] - e[new.a]) / 400.0))
    y = (new.outcome == 0).astype(float)
    return float(-(y * np.log(p) + (1.0 - y) * np.log1p(-p)).mean())


@pytest.fixture(scope="module")
def simulated_users():
    """12 users at each distance from the crowd, N_USER votes each: lam and new-vote losses."""
    crowd = CrowdBoard(crowd_counts())
    out = {}
    for delta in (0.0, 0.5, 2.0):
        lams, losses, cv = [], [], []
        for i in range(12):
            ratings = taste(delta)
            votes = user_votes(ratings, N_USER, seed=1000 + i + int(100 * delta))
            history = personal_history(crowd, votes)
            lam = history[-1].lam
            lams.append(lam)
            cv.append((history[-1].cv_loss, *cv_loss(crowd, votes, [0.0, 1.0])))
            boards = [history[-1], fit_scores(crowd, votes, 0.0), fit_scores(crowd, votes, 1.0)]
            losses.append([future_loss(b, ratings, seed=5000 + i) for b in boards])
        out[delta] = (np.array(lams), np.array(losses).mean(axis=0), np.array(cv))
    return out


def test_lambda_is_near_one_for_a_user_like_the_crowd_and_falls_with_distance(simulated_users):
    median = {d: float(np.median(lams)) for d, (lams, _, _) in simulated_users.items()}
    assert median[0.0] >= 0.9
    assert median[0.0] > median[0.5] > median[2.0]
    assert median[2.0] <= 0.25


def test_chosen_lambda_predicts_new_votes_no_worse_than_either_extreme(simulated_users):
    for delta, (_lams, (chosen, user_only, crowd_only), cv) in simulated_users.items():
        # On the held-out votes the search sees: never worse, by construction.
        assert np.all(cv[:, 0] <= cv[:, 1] + 1e-12) and np.all(cv[:, 0] <= cv[:, 2] + 1e-12)
        # On 20,000 new votes of each user (mean over 12 users): no worse than the better
        # extreme, up to the noise of choosing lam from N_USER votes.
        assert chosen <= min(user_only, crowd_only) + 0.004, (delta, chosen, user_only, crowd_only)
    _lams, (chosen, user_only, crowd_only), _cv = simulated_users[0.5]
    assert chosen < min(user_only, crowd_only)  # in between, mixing beats both
