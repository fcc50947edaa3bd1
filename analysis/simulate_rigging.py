"""Simulated vote rigging over an honest arena (Min et al., ICML 2025), with known truth.

Computes one row per vote of an honest arena (``analysis.simulate_users``: heterogeneous tastes,
heavy-tailed activity) plus the votes of attacking accounts, with what the server would see of
each vote: the user, the two models (top, bottom), the outcome (``OUTCOME_*`` or
``OUTCOME_BOTH_BAD``), the battle kind, the time, the client IP and a context id (one per
distinct code context; a repeated context repeats the id).

The honest arena: votes spread uniformly over ``days`` days, between 08:00 and 23:00 of a day;
a share ``edit_share`` of battles are edits, where "both bad" is a possible answer
(``both_bad_rate`` of edit votes); each user votes from their own IP; with probability
``repeat_context`` a vote repeats the user's previous context (a completion asked again at the
same spot).

The attacks. Pairs are served uniformly (the attacker cannot choose its opponents: votes are
bound to served pairs). Models are not named before the vote; the attacker recognises the
target's completion with probability ``accuracy`` -- we assume a style classifier trained on
the target's outputs, which Min et al. show reaches this range -- and otherwise takes the other
completion for the target. On a battle without the target the classifier says "absent" with
the same accuracy, and otherwise picks a side at random as "the target".

* ``target_only``: the attacker votes only where it believes the target is shown, for it, and
  skips the other battles (a skipped battle is served, not voted).
* ``omnipresent``: the attacker votes on every battle: for the target where it sees it; in
  the other battles against the models ranked above the target (the published order, known
  to the attacker; models recognised with the same accuracy): the model below wins, and of
  two models above the target the lower one wins; between two models below it votes at random.

Pace: ``human`` spreads each account's votes over consecutive days, at most ``HUMAN_PER_DAY``
a day at random times of the waking day, each vote with a fresh context; ``scripted`` casts
them one every 0.5 to 1.5 seconds from one IP shared by the attacking accounts, every vote of
an account on the same context.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, GroupedCounts, group_battles
from analysis.simulate_users import simulate_user_arena

__all__ = [
    "HUMAN_PER_DAY",
    "OUTCOME_BOTH_BAD",
    "Attack",
    "RiggedArena",
    "honest_arena",
    "rig",
]

OUTCOME_BOTH_BAD = 3  # the stored code of "both bad" (ingest.models.Outcome.BOTH_BAD)
HUMAN_PER_DAY = 72
KIND_COMPLETION, KIND_EDIT = 0, 1
DAY = 86_400.0
# The ratings of the arena: eleven models, the target fifth.
RATINGS = np.array([1052.0, 1046, 1038, 1031, 1024, 1012, 998, 984, 966, 948, 925])
TARGET = 4


@dataclass(frozen=True)
class Attack:
    """What one attacker (one or many accounts) does."""

    kind: Literal["target_only", "omnipresent"]
    accounts: int
    votes: int  # rigged votes cast in all, split evenly over the accounts
    pace: Literal["human", "scripted"]
    accuracy: float = 0.9

    @property
    def label(self) -> str:
        return f"{self.kind} {self.votes} votes, {self.accounts} acct, {self.pace}"


@dataclass(frozen=True)
class RiggedArena:
    """One row per vote; ``attacker[u]`` says whether user ``u`` is an attacking account."""

    models: tuple[str, ...]
    truth: np.ndarray  # population truth of the honest arena (mean 1000)
    target: int
    user: np.ndarray
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray  # OUTCOME_A / _B / _TIE / OUTCOME_BOTH_BAD
    kind: np.ndarray  # KIND_COMPLETION / KIND_EDIT
    time: np.ndarray  # seconds since the arena's start
    ip: np.ndarray
    context: np.ndarray
    attacker: np.ndarray = field(repr=False)  # bool per user index

    @property
    def n_users(self) -> int:
        return len(self.attacker)

    @property
    def day(self) -> np.ndarray:
        return (self.time // DAY).astype(np.int64)

    def counts(
        self, *, weight: np.ndarray | None = None, keep: np.ndarray | None = None
    ) -> GroupedCounts:
        """Counts per (user, top, bottom, outcome) of the kept votes ("both bad" counts as a
        tie, as in the product), with per-vote ``weight`` summed per row."""
        m = np.ones(len(self.a), dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
        outcome = np.where(self.outcome == OUTCOME_BOTH_BAD, OUTCOME_TIE, self.outcome)
        return group_battles(
            self.a[m],
            self.b[m],
            outcome[m],
            models=self.models,
            user=self.user[m],
            weight=None if weight is None else np.asarray(weight, dtype=float)[m],
        )


def _waking_times(days: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.asarray(days * DAY + rng.uniform(8 * 3600, 23 * 3600, len(days)))


def _contexts(user: np.ndarray, repeat: float, rng: np.random.Generator) -> np.ndarray:
    """Context ids in vote order per user; a repeat takes the user's previous id."""
    fresh = np.arange(len(user), dtype=np.int64)
    again = rng.random(len(user)) < repeat
    again[0] = False
    again[1:] &= user[1:] == user[:-1]
    # the id of the last fresh context at or before each vote
    last_fresh = np.maximum.accumulate(np.where(again, -1, np.arange(len(user))))
    return fresh[last_fresh]


def honest_arena(
    *,
    n: int = 20_000,
    n_users: int = 1_400,
    ratings: np.ndarray = RATINGS,
    target: int = TARGET,
    pref_sd: float = 30.0,
    tie_rate: float = 0.015,
    top_slot_p: float = 0.6,
    edit_share: float = 0.15,
    both_bad_rate: float = 0.05,
    repeat_context: float = 0.03,
    days: int = 30,
    seed: int | np.random.Generator | None = None,
) -> RiggedArena:
    """The honest arena (see the module docstring); no attacker yet."""
    rng = np.random.default_rng(seed)
    arena = simulate_user_arena(
        ratings, n, n_users=n_users, pref_sd=pref_sd, pareto_shape=1.5,
        tie_rate=tie_rate, top_slot_p=top_slot_p, seed=rng,
    )  # fmt: skip
    kind = np.where(rng.random(n) < edit_share, KIND_EDIT, KIND_COMPLETION)
    outcome = arena.outcome.astype(np.int64).copy()
    outcome[(kind == KIND_EDIT) & (rng.random(n) < both_bad_rate)] = OUTCOME_BOTH_BAD
    time = _waking_times(rng.integers(0, days, n), rng)
    order = np.lexsort((time, arena.user))
    user = arena.user[order]
    return RiggedArena(
        models=arena.models,
        truth=arena.truth,
        target=target,
        user=user,
        a=arena.a[order],
        b=arena.b[order],
        outcome=outcome[order],
        kind=kind[order],
        time=time[order],
        ip=user.copy(),
        context=_contexts(user, repeat_context, rng),
        attacker=np.zeros(n_users, dtype=bool),
    )


def _serve(k: int, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    iu, ju = np.triu_indices(k, 1)
    pair = rng.integers(0, len(iu), size)
    swap = rng.random(size) < 0.5
    return np.where(swap, ju[pair], iu[pair]), np.where(swap, iu[pair], ju[pair])


def _believed_target(
    a: np.ndarray, b: np.ndarray, target: int, accuracy: float, rng: np.random.Generator
) -> np.ndarray:
    """Per battle the side the classifier calls the target: 0 top, 1 bottom, -1 absent."""
    right = rng.random(len(a)) < accuracy
    shown = (a == target) | (b == target)
    true_side = np.where(a == target, 0, 1)
    side = np.where(right, true_side, 1 - true_side)
    guess = np.where(right, -1, rng.integers(0, 2, len(a)))
    return np.where(shown, side, guess)


def _omnipresent_winner(
    a: np.ndarray, b: np.ndarray, rank: np.ndarray, target: int, accuracy: float,
    rng: np.random.Generator,
) -> np.ndarray:  # fmt: skip
    """The side (0 top, 1 bottom) an omnipresent attacker votes for in a battle without the
    target: against the model ranked above the target, the lower of two above it."""
    above_a, above_b = rank[a] < rank[target], rank[b] < rank[target]
    lower = np.where(rank[a] > rank[b], 0, 1)  # the side of the lower-ranked model
    side = np.where(above_a | above_b, lower, rng.integers(0, 2, len(a)))
    # a misrecognised pair gets the opposite vote
    return np.where(rng.random(len(a)) < accuracy, side, 1 - side)


def _attack_votes(
    attack: Attack, k: int, target: int, rank: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(top, bottom, outcome) of ``attack.votes`` rigged votes in casting order."""
    need = attack.votes
    tops, bottoms, outs = [], [], []
    while need > 0:
        a, b = _serve(k, max(4 * need, 64), rng)
        side = _believed_target(a, b, target, attack.accuracy, rng)
        if attack.kind == "omnipresent":
            shown = (a == target) | (b == target)
            other = _omnipresent_winner(a, b, rank, target, attack.accuracy, rng)
            side = np.where(shown, side, other)
        cast = side >= 0
        a, b, side = a[cast][:need], b[cast][:need], side[cast][:need]
        tops.append(a)
        bottoms.append(b)
        outs.append(np.where(side == 0, OUTCOME_A, OUTCOME_B))
        need -= len(a)
    return np.concatenate(tops), np.concatenate(bottoms), np.concatenate(outs)


def _attack_times(
    per_account: np.ndarray, pace: str, days: int, rng: np.random.Generator
) -> np.ndarray:
    times = []
    for n_votes in per_account:
        if pace == "scripted":
            start = rng.integers(0, days) * DAY + 10 * 3600
            times.append(start + np.cumsum(rng.uniform(0.5, 1.5, n_votes)))
            continue
        n_days = -(-int(n_votes) // HUMAN_PER_DAY)
        first = rng.integers(0, max(days - n_days, 0) + 1)
        day = first + np.arange(n_votes) // HUMAN_PER_DAY
        times.append(np.sort(_waking_times(day, rng)))
    return np.concatenate(times)


def rig(
    honest: RiggedArena,
    attack: Attack,
    *,
    days: int = 30,
    seed: int | np.random.Generator | None = None,
) -> RiggedArena:
    """``honest`` with the attack's votes added from ``attack.accounts`` new users."""
    if attack.accounts < 1 or attack.votes < attack.accounts or not 0 <= attack.accuracy <= 1:
        raise ValueError("need votes >= accounts >= 1 and an accuracy in [0, 1]")
    rng = np.random.default_rng(seed)
    k = len(honest.models)
    rank = np.argsort(np.argsort(-honest.truth))  # 0 = first in the published order
    a, b, outcome = _attack_votes(attack, k, honest.target, rank, rng)
    per_account = np.full(attack.accounts, attack.votes // attack.accounts)
    per_account[: attack.votes % attack.accounts] += 1
    first_user = honest.n_users
    user = first_user + np.repeat(np.arange(attack.accounts), per_account)
    time = _attack_times(per_account, attack.pace, days, rng)
    base_context = int(honest.context.max()) + 1
    if attack.pace == "scripted":
        context = base_context + (user - first_user)
        ip = np.full(len(user), int(honest.ip.max()) + 1)
    else:
        context = base_context + np.arange(len(user))
        ip = int(honest.ip.max()) + 1 + (user - first_user)
    return replace(
        honest,
        user=np.concatenate([honest.user, user]),
        a=np.concatenate([honest.a, a]),
        b=np.concatenate([honest.b, b]),
        outcome=np.concatenate([honest.outcome, outcome]),
        kind=np.concatenate([honest.kind, np.full(len(a), KIND_COMPLETION)]),
        time=np.concatenate([honest.time, time]),
        ip=np.concatenate([honest.ip, ip]),
        context=np.concatenate([honest.context, context]),
        attacker=np.concatenate([honest.attacker, np.ones(attack.accounts, dtype=bool)]),
    )
