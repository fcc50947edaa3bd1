"""Presence and affinity (analysis.rigging_scores), shared by the simulation and the product:
the simulation's flags are what they were before the scores moved there, and the product's
reference (the other users' share of each day) flags the same attackers."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.grouping import OUTCOME_A, OUTCOME_B
from analysis.rigging_rules import NewThresholds, new_flags, user_z_scores
from analysis.rigging_scores import user_scores
from analysis.simulate_rigging import Attack, RiggedArena, honest_arena, rig

K = 11


def _before(v: RiggedArena) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """analysis.rigging_rules.user_z_scores as it was before the scores were shared."""
    nu, k = v.n_users, K
    votes = np.bincount(v.user, minlength=nu).astype(float)
    present = np.zeros((nu, k))
    np.add.at(present, (v.user, v.a), 1.0)
    np.add.at(present, (v.user, v.b), 1.0)
    q = 2.0 / k
    presence = (present - votes[:, None] * q) / np.sqrt(np.maximum(votes, 1)[:, None] * q * (1 - q))
    decisive = v.outcome <= OUTCOME_B
    u, a, b = v.user[decisive], v.a[decisive], v.b[decisive]
    win = np.where(v.outcome[decisive] == OUTCOME_A, a, b)
    cell = np.zeros((k, k))
    np.add.at(cell, (win, np.where(win == a, b, a)), 1.0)
    own = np.zeros((nu, k, k))
    np.add.at(own, (u, win, np.where(win == a, b, a)), 1.0)
    expected, variance, wins = np.zeros((nu, k)), np.zeros((nu, k)), np.zeros((nu, k))
    np.add.at(wins, (u, win), 1.0)
    for m_side, o_side in ((a, b), (b, a)):
        others_m = cell[m_side, o_side] - own[u, m_side, o_side]
        others_o = cell[o_side, m_side] - own[u, o_side, m_side]
        total = others_m + others_o
        p = np.where(total > 0, others_m / np.maximum(total, 1), 0.5)
        np.add.at(expected, (u, m_side), p)
        np.add.at(variance, (u, m_side), p * (1 - p))
    affinity = (wins - expected) / np.sqrt(np.maximum(variance, 0.25))
    return votes, presence.max(axis=1), affinity.max(axis=1)


@pytest.fixture(scope="module")
def honest() -> RiggedArena:
    return honest_arena(seed=1000)


@pytest.fixture(scope="module")
def rigged(honest: RiggedArena) -> RiggedArena:
    return rig(honest, Attack("target_only", 5, 1000, "human"), seed=2000)


@pytest.fixture(scope="module")
def omnipresent(honest: RiggedArena) -> RiggedArena:
    return rig(honest, Attack("omnipresent", 1, 1000, "human"), seed=2000)


def test_the_simulation_scores_and_flags_are_unchanged(rigged: RiggedArena) -> None:
    votes, presence, affinity = _before(rigged)
    now = user_z_scores(rigged, n_models=K)
    np.testing.assert_array_equal(now[0], votes)
    np.testing.assert_array_equal(now[1], presence)
    np.testing.assert_array_equal(now[2], affinity)
    t = NewThresholds()
    flags = new_flags(rigged, n_models=K)
    enough = votes >= t.min_votes
    np.testing.assert_array_equal(flags["presence"], enough & (presence >= t.z))
    np.testing.assert_array_equal(flags["affinity"], enough & (affinity >= t.z))
    # the benchmark's figures for this attack: every attacking account, few honest ones
    either = flags["presence"] | flags["affinity"]
    assert either[rigged.attacker].all()
    assert either[~rigged.attacker].mean() <= 0.005


def test_the_scores_name_the_target(rigged: RiggedArena) -> None:
    s = user_scores(
        rigged.user, rigged.a, rigged.b, rigged.outcome, n_users=rigged.n_users, n_models=K
    )
    presence, affinity = s.flagged(z=4.5, min_votes=10)
    assert (s.presence_model[rigged.attacker] == rigged.target).all()
    assert (s.affinity_model[rigged.attacker & affinity] == rigged.target).all()
    assert presence[rigged.attacker].all()


def test_grouped_rows_score_as_one_row_per_vote(rigged: RiggedArena) -> None:
    day = rigged.day
    rows, n = np.unique(
        np.stack([rigged.user, rigged.a, rigged.b, rigged.outcome, day], axis=1),
        axis=0,
        return_counts=True,
    )
    assert len(rows) < len(rigged.user)  # some votes do group
    for period in (None, day):
        one = user_scores(
            rigged.user,
            rigged.a,
            rigged.b,
            rigged.outcome,
            n_users=rigged.n_users,
            n_models=K,
            period=period,
        )
        grouped = user_scores(
            rows[:, 0],
            rows[:, 1],
            rows[:, 2],
            rows[:, 3],
            n_users=rigged.n_users,
            n_models=K,
            count=n,
            period=None if period is None else rows[:, 4],
        )
        np.testing.assert_allclose(grouped.presence, one.presence, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(grouped.affinity, one.affinity, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("arena", ["rigged", "omnipresent"])
def test_the_products_daily_reference_flags_the_same_attackers(
    arena: str, request: pytest.FixtureRequest
) -> None:
    v: RiggedArena = request.getfixturevalue(arena)
    uniform = user_scores(v.user, v.a, v.b, v.outcome, n_users=v.n_users, n_models=K)
    daily = user_scores(v.user, v.a, v.b, v.outcome, n_users=v.n_users, n_models=K, period=v.day)
    f_uniform = np.logical_or(*uniform.flagged(z=4.5, min_votes=10))
    f_daily = np.logical_or(*daily.flagged(z=4.5, min_votes=10))
    assert f_daily[v.attacker].mean() >= f_uniform[v.attacker].mean()
    assert f_daily[~v.attacker].sum() <= f_uniform[~v.attacker].sum() + 2


def test_the_daily_reference_follows_a_server_that_favours_a_model() -> None:
    # Model 0 is in every battle on even days and in none on odd days; each user votes on
    # one kind of day only. Against 2 / K everyone is far off; against the day's share no one.
    rng = np.random.default_rng(1)
    users, per_user, k = 60, 30, 6
    user = np.repeat(np.arange(users), per_user)
    day = 2 * rng.integers(0, 5, users)[user] + (user % 2)
    pairs = np.array([rng.choice(np.arange(1, k), 2, replace=False) for _ in user])
    a = np.where(day % 2 == 0, 0, pairs[:, 0])
    b = pairs[:, 1]
    outcome = rng.integers(0, 2, len(user))
    uniform = user_scores(user, a, b, outcome, n_users=users, n_models=k)
    daily = user_scores(user, a, b, outcome, n_users=users, n_models=k, period=day)
    assert uniform.flagged(z=4.5, min_votes=10)[0].sum() >= users // 2
    assert not daily.flagged(z=4.5, min_votes=10)[0].any()
