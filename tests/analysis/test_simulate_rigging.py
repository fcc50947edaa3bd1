"""The rigging simulator (analysis.simulate_rigging), its rules and the defended board."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from analysis.rigging_defences import Caps, board, defended_board, defended_weights
from analysis.rigging_rules import new_flags, today_flags
from analysis.simulate_rigging import HUMAN_PER_DAY, Attack, honest_arena, rig


@pytest.fixture(scope="module")
def honest():
    return honest_arena(seed=11)


def test_the_honest_arena_is_the_issues(honest):
    assert len(honest.a) == 20_000 and honest.n_users == 1_400
    assert len(honest.models) == 11
    assert int(np.argsort(-honest.truth)[4]) == honest.target  # the target is 5th
    assert not honest.attacker.any()


def test_attacks_vote_as_described(honest):
    attack = Attack("target_only", 5, 1000, "human")
    r = rig(honest, attack, seed=3)
    atk = r.user >= honest.n_users
    assert atk.sum() == 1000 and r.attacker.sum() == 5
    # human pace: never more than the stated votes per account per day, a context per vote
    per_day = np.unique(np.stack([r.user[atk], r.day[atk]], axis=1), axis=0, return_counts=True)
    assert per_day[1].max() <= HUMAN_PER_DAY
    assert len(np.unique(r.context[atk])) == 1000
    # target-only: mostly battles with the target, and mostly won by it
    shown = (r.a[atk] == r.target) | (r.b[atk] == r.target)
    assert shown.mean() > 0.6
    won = np.where(r.outcome[atk] == 0, r.a[atk], r.b[atk]) == r.target
    assert won[shown].mean() == pytest.approx(0.9, abs=0.04)
    scripted = rig(honest, Attack("omnipresent", 2, 300, "scripted"), seed=3)
    s_atk = scripted.user >= honest.n_users
    assert len(np.unique(scripted.context[s_atk])) == 2  # one context per account
    assert np.median(np.diff(np.sort(scripted.time[scripted.user == honest.n_users]))) < 2


def test_rigging_moves_the_target_and_the_defences_hold(honest):
    t = honest.target
    rigged = rig(honest, Attack("target_only", 1, 1000, "human"), seed=5)
    off_gain = board(rigged).rating[t] - board(honest).rating[t]
    assert off_gain > 20  # known truth: the honest target is 5th, ~28 below the first
    assert not today_flags(rigged)["outlier"][rigged.attacker].any()  # today: not caught
    new, flags = defended_board(rigged, "new")
    base, _ = defended_board(honest, "new")
    assert flags[rigged.attacker].all()
    assert abs(new.rating[t] - base.rating[t]) <= 5


def test_the_new_rules_flag_few_honest_users(honest):
    found = np.logical_or.reduce(list(new_flags(honest, n_models=11).values()))
    today = np.logical_or.reduce(list(today_flags(honest).values()))
    assert found.mean() <= 0.01
    assert today.mean() > 0.05  # today's outlier rule scores "both bad" as a rare tie


def test_the_caps_bound_every_users_weight(honest):
    w = defended_weights(honest, Caps(day=50, total=200))
    total = np.bincount(honest.user, weights=w)
    assert total.max() <= 200 + 1e-9
    assert total.max() > 150  # the heaviest users are capped, not removed
    # users far below the caps keep their dedup weights (1 unless a context repeats)
    light = (np.bincount(honest.user) <= 20)[honest.user]
    dedup = defended_weights(honest, Caps(day=None, total=None))
    assert np.array_equal(w[light], dedup[light])
    assert (dedup == 1.0).mean() > 0.9


def test_the_benchmark_runs_in_its_quick_mode():
    # docs/ratings.md shows `benchmarks/bench_rigging.py --seeds 5`; the quick mode runs here
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_rigging.py"
    out = subprocess.run(
        [sys.executable, str(script), "--quick", "--seeds", "1"],
        capture_output=True, text=True, check=True, timeout=600,
    ).stdout  # fmt: skip
    assert "| target_only 1000 votes, 20 acct, human |" in out
    assert "interval coverage of the truth" in out
