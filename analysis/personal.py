"""Personal leaderboards: one user's Bradley-Terry ratings, borrowing strength from the crowd.

Computes, for one user, the ratings the extension's Personal Statistics panel shows, and their
history: one score list per ``interval`` (20) of the user's votes, each fitted on the user's
votes up to that point (oldest first; the last list uses all of them). The method is the one
the original Copilot Arena server used (``server/src/scores.py``), implemented on grouped
counts with this package's Bradley-Terry likelihood (``bt_problem``):

* one fit on the crowd's battles, each weighted ``lam / N_crowd``, together with the user's own
  battles, each weighted ``(1 - lam) / N_user`` (a tie is half a win), plus a small L2 penalty
  ``l2 / 2 * |theta|^2`` on the natural log-odds (relative to that total data weight of 1);
* ``lam`` chosen by held-out log-loss of the user's own votes: blocks of 5 consecutive votes
  are held out in turn (block ``i`` in fold ``i % folds``), and an interval-halving search over
  [0, 1] (start at 0.5, compare the quarter points, move to the best or shrink around it,
  ``steps`` times) picks the value; 0 and 1 themselves are evaluated too, so the chosen value
  is never worse on the held-out votes than either extreme;
* nothing (an empty history) below ``min_votes`` (20) of the user's votes, or when all of the
  user's votes have the same outcome.

Unlike the original, every vote is held out once (it held out half of each 10), the loss at
0.5 is actually evaluated before the search compares against it, and the history has one list
per 20 votes (it returned only the last). ``lam`` is chosen once, on all the user's votes, and
used for every list of the history: how far a user is from the crowd is estimated best from
all their votes (from the first 20 alone it is mostly noise), and the lists then differ only by
the votes they include. Scores are on the 400-point scale, the mean of the listed models at
1000; ``votes`` is the number of the user's votes the model took part in. Listed are the models
with at least one battle, the crowd's or the user's.

Everything is batched: the fits of one search step (2 candidates x folds) are the columns of
one damped Newton solve, and so are the fits of every list of the history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from analysis.bt_problem import BTProblem
from analysis.grouping import OUTCOME_TIE, GroupedCounts
from analysis.scale import CENTRE, SCALE

__all__ = [
    "DEFAULT_L2",
    "CrowdBoard",
    "ModelScore",
    "PersonalBoard",
    "UserVotes",
    "as_payload",
    "cv_loss",
    "fit_scores",
    "personal_history",
]

DEFAULT_L2 = 1e-3
BLOCK = 5  # consecutive votes held out together, as the original server did
_GTOL = 1e-9  # gradient norm of the (weight-1) objective: far below what changes a loss
Floats = NDArray[np.float64]
Ints = NDArray[np.int64]


@dataclass(frozen=True)
class UserVotes:
    """One user's votes, oldest first: ``a`` on top, ``b`` at the bottom, as model indices."""

    a: Ints
    b: Ints
    outcome: Ints

    @classmethod
    def from_keys(
        cls,
        model_a: Sequence[str],
        model_b: Sequence[str],
        outcome: Sequence[int],
        *,
        models: Sequence[str],
    ) -> UserVotes:
        index = {m: i for i, m in enumerate(models)}
        try:
            a = np.array([index[m] for m in model_a], dtype=np.int64)
            b = np.array([index[m] for m in model_b], dtype=np.int64)
        except KeyError as exc:
            raise ValueError(f"model {exc.args[0]!r} is not on the crowd's board") from None
        return cls(a=a, b=b, outcome=np.asarray(outcome, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.a)


@dataclass(frozen=True)
class ModelScore:
    model: str
    elo: float
    votes: int

    def as_dict(self) -> dict[str, object]:
        """The panel's row: ``{model, elo, votes}``, elo rounded to 2 decimals."""
        return {"model": self.model, "elo": round(self.elo, 2), "votes": self.votes}


@dataclass(frozen=True)
class PersonalBoard:
    """The ratings after the user's first ``n_votes`` votes, best first."""

    n_votes: int
    lam: float
    cv_loss: float  # mean held-out log-loss of those votes at ``lam``
    scores: tuple[ModelScore, ...]


class CrowdBoard:
    """The crowd's counts, prepared once (per published snapshot) for any number of users.

    The likelihood is set up over every pair of ``counts.models`` (an unseen pair costs a
    zero-weight row), so any user's votes map onto it without rebuilding it.
    """

    def __init__(self, counts: GroupedCounts) -> None:
        k = counts.n_models
        self.models = counts.models
        i, j = np.triu_indices(k, 1)
        pairs = len(i)
        a = np.repeat(i, 3)
        b = np.repeat(j, 3)
        full = GroupedCounts(
            models=counts.models,
            a=a,
            b=b,
            outcome=np.tile(np.arange(3), pairs),
            count=np.ones(3 * pairs, dtype=np.int64),
        )
        every = np.ones(k, dtype=bool)
        self.problem = BTProblem(full, fitted=every, core=every, position_bias=False)
        p = self.problem
        self._keys = (p.pi[p.cat_pair] * k + p.pj[p.cat_pair]) * 3 + p.cat_code
        if np.any(np.diff(self._keys) <= 0):  # pragma: no cover - BTProblem sorts its cells
            raise AssertionError("categories are expected in key order")
        self.total = counts.total
        crowd = self.categories(counts.a, counts.b, counts.outcome)
        counted = np.bincount(crowd, weights=counts.count, minlength=len(self._keys))
        self.weights: Floats = counted.astype(np.float64)
        if self.total:
            self.weights /= self.total
        self.seen: NDArray[np.bool_] = counts.battles_per_model() > 0
        self.n, self.s = self.problem.pair_stats(self.weights)  # (P, 1)
        self._theta: dict[float, Floats] = {}

    def theta(self, l2: float) -> Floats:
        """The crowd-only fit (lam = 1): where every personal fit starts from."""
        if l2 not in self._theta:
            start = np.zeros((self.problem.d, 1))
            self._theta[l2] = _solve(self.problem, self.n, self.s, l2, start)[:, 0]
        return self._theta[l2]

    def categories(self, a: Ints, b: Ints, outcome: Ints) -> Ints:
        """Category (unordered pair, result) of each battle."""
        first, second = np.minimum(a, b), np.maximum(a, b)
        won = np.where((outcome == 0) == (a < b), 0, 2)
        code = np.where(outcome == OUTCOME_TIE, 1, won)
        keys = (first * len(self.models) + second) * 3 + code
        return np.searchsorted(self._keys, keys).astype(np.int64)


def _solve(problem: BTProblem, n: Floats, s: Floats, l2: float, theta: Floats) -> Floats:
    """Maximise loglik - l2/2 |theta|^2 for every column of pair statistics (P, R) at once.

    Damped Newton; the objective is strictly concave, so a full step is taken unless it lowers
    the objective (then halved until it does not).
    """
    theta = theta.copy()
    eye = l2 * np.eye(problem.d)

    def objective(th: Floats, cols: Ints) -> Floats:
        # s log p + (n - s) log(1 - p) = s * logit - n * log(1 + e^logit)
        lg = problem.logits(th)
        ll: Floats = (s[:, cols] * lg - n[:, cols] * np.logaddexp(0.0, lg)).sum(axis=0)
        penalised: Floats = ll - 0.5 * l2 * (th * th).sum(axis=0)
        return penalised

    f = objective(theta, np.arange(theta.shape[1]))
    for _ in range(100):
        g = problem.gradient(theta, n, s) - l2 * theta
        active = np.flatnonzero(np.linalg.norm(g, axis=0) > _GTOL)
        if not len(active):
            break
        th, f0 = theta[:, active], f[active]
        h = problem.hessian(th, n[:, active]) + eye
        step = np.linalg.solve(h, g[:, active].T[..., None])[..., 0].T
        t = np.ones(len(active))
        for _ in range(40):
            f1 = objective(th + t * step, active)
            worse = f1 < f0 - 1e-15 * (1.0 + np.abs(f0))
            if not worse.any():
                break
            t[worse] *= 0.5
        theta[:, active] = th + t * step
        f[active] = f1
    return theta


def _held_out(crowd: CrowdBoard, votes: UserVotes, folds: int) -> Floats:
    """Category counts (M, F) of the votes in each fold."""
    cats = crowd.categories(votes.a, votes.b, votes.outcome)
    fold = (np.arange(len(votes)) // BLOCK) % folds
    out = np.zeros((len(crowd.weights), folds))
    np.add.at(out, (cats, fold), 1.0)
    return out


def _mix(crowd: CrowdBoard, user: Floats, lams: Floats) -> tuple[Floats, Floats]:
    """Pair statistics (P, G, X) of lam * crowd + (1 - lam) * user, user = category weights (M, X)."""
    un, us = crowd.problem.pair_stats(user)
    lam = lams[None, :, None]
    n = lam * crowd.n[:, :, None] + (1.0 - lam) * un[:, None, :]
    s = lam * crowd.s[:, :, None] + (1.0 - lam) * us[:, None, :]
    return n, s


def _cv(
    crowd: CrowdBoard, held: Floats, lams: Floats, l2: float, theta: Floats
) -> tuple[Floats, Floats]:
    """Mean held-out log-loss for each of ``lams`` (G,), and the fits (D, G, F)."""
    f_n = held.shape[1]
    train = held.sum(axis=1, keepdims=True) - held
    n, s = _mix(crowd, train / np.maximum(train.sum(axis=0), 1.0), lams)
    p_n = n.shape[0]
    d = crowd.problem.d
    th = _solve(crowd.problem, n.reshape(p_n, -1), s.reshape(p_n, -1), l2, theta.reshape(d, -1))
    rows = np.flatnonzero(held.sum(axis=1) > 0)  # only the cells the user's votes fall in
    lg = crowd.problem.logits(th)[crowd.problem.cat_pair[rows]]  # (cells, G*F)
    y = crowd.problem.cat_y[rows, None]
    # -log P(observed) with a tie as half a win: y log(1 + e^-lg) + (1 - y) log(1 + e^lg)
    lost = (y * np.logaddexp(0.0, -lg) + (1.0 - y) * np.logaddexp(0.0, lg)).reshape(
        len(rows), len(lams), f_n
    )
    total = (held[rows, None, :] * lost).sum(axis=(0, 2))
    return total / max(held.sum(), 1.0), th.reshape(d, len(lams), f_n)


def _choose(crowd: CrowdBoard, held: Floats, l2: float, steps: int) -> tuple[float, float]:
    """lam by the interval-halving search over [0, 1], and its held-out loss."""
    f_n = held.shape[1]
    start = np.array([0.0, 1.0, 0.5])
    theta0 = np.broadcast_to(crowd.theta(l2)[:, None, None], (crowd.problem.d, 3, f_n))
    loss, fits = _cv(crowd, held, start, l2, theta0)
    tried = list(zip(start.tolist(), loss.tolist(), strict=True))
    best, best_loss, warm = 0.5, float(loss[2]), fits[:, 2, :]
    lo, hi = 0.0, 1.0
    for _ in range(steps):
        cand = np.array([(lo + best) / 2, (best + hi) / 2])
        loss, fits = _cv(crowd, held, cand, l2, np.stack([warm, warm], axis=1))
        tried += zip(cand.tolist(), loss.tolist(), strict=True)
        if best_loss <= loss[0] and best_loss <= loss[1]:
            lo, hi = float(cand[0]), float(cand[1])
            continue
        pick = 0 if loss[0] < loss[1] else 1
        lo, hi = (lo, best) if pick == 0 else (best, hi)
        best, best_loss, warm = float(cand[pick]), float(loss[pick]), fits[:, pick, :]
    # The lowest loss seen; among equals the largest lam (the crowd's board is the simpler one).
    lam, lowest = min(tried, key=lambda t: (t[1], -t[0]))
    return lam, lowest


def _boards(
    crowd: CrowdBoard, votes: UserVotes, ends: Ints, lam: float, loss: float, l2: float
) -> list[PersonalBoard]:
    k = len(crowd.models)
    cats = crowd.categories(votes.a, votes.b, votes.outcome)
    user = np.zeros((len(crowd.weights), len(ends)))
    for c, end in enumerate(ends):
        np.add.at(user[:, c], cats[:end], 1.0)
    n, s = _mix(crowd, user / np.maximum(ends, 1), np.array([lam]))
    start = np.repeat(crowd.theta(l2)[:, None], len(ends), axis=1)
    theta = _solve(crowd.problem, n[:, 0, :], s[:, 0, :], l2, start)
    boards = []
    for c, end in enumerate(ends):
        per_model = np.bincount(votes.a[:end], minlength=k) + np.bincount(
            votes.b[:end], minlength=k
        )
        listed = np.flatnonzero(crowd.seen | (per_model > 0))
        th = theta[listed, c]
        elo = CENTRE + SCALE * (th - th.mean())
        scores = sorted(
            (
                ModelScore(crowd.models[m], float(e), int(per_model[m]))
                for m, e in zip(listed, elo, strict=True)
            ),
            key=lambda s: (-s.elo, s.model),
        )
        boards.append(PersonalBoard(int(end), lam, loss, tuple(scores)))
    return boards


def _checkpoints(n: int, interval: int, min_votes: int) -> Ints:
    ends = [e for e in range(interval, n + 1, interval) if e >= min_votes]
    if ends:
        ends[-1] = n
    return np.array(ends, dtype=np.int64)


def personal_history(
    crowd: CrowdBoard,
    votes: UserVotes,
    *,
    min_votes: int = 20,
    interval: int = 20,
    l2: float = DEFAULT_L2,
    folds: int = 5,
    steps: int = 5,
) -> list[PersonalBoard]:
    """One board per ``interval`` of the user's votes, oldest first; [] when gated (see above)."""
    n = len(votes)
    if n < max(min_votes, 1) or np.all(votes.outcome == votes.outcome[0]):
        return []
    ends = _checkpoints(n, interval, min_votes)
    if not len(ends):
        return []
    lam, loss = _choose(crowd, _held_out(crowd, votes, folds), l2, steps)
    return _boards(crowd, votes, ends, lam, loss, l2)


def cv_loss(
    crowd: CrowdBoard,
    votes: UserVotes,
    lams: Sequence[float],
    *,
    l2: float = DEFAULT_L2,
    folds: int = 5,
) -> Floats:
    """Held-out log-loss of all the user's votes at each of ``lams`` (the search's criterion)."""
    grid = np.asarray(lams, dtype=float)
    theta = np.broadcast_to(crowd.theta(l2)[:, None, None], (crowd.problem.d, len(grid), folds))
    loss, _ = _cv(crowd, _held_out(crowd, votes, folds), grid, l2, theta)
    return loss


def fit_scores(
    crowd: CrowdBoard, votes: UserVotes, lam: float, *, l2: float = DEFAULT_L2
) -> PersonalBoard:
    """The board on all the user's votes at a given ``lam`` (no search, no gate)."""
    ends = np.array([len(votes)], dtype=np.int64)
    return _boards(crowd, votes, ends, lam, float("nan"), l2)[0]


def as_payload(history: Sequence[PersonalBoard]) -> list[list[dict[str, object]]]:
    """What ``POST /user_scores`` answers: a list of score lists, oldest first."""
    return [[s.as_dict() for s in board.scores] for board in history]
