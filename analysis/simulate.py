"""Simulated battles from a Bradley-Terry model with a top-slot advantage and ties.

Computes per-battle arrays (top model, bottom model, outcome) from known ratings on the
400-point scale. Used by the tests (recovery and coverage), the benchmark and the Django
``simulate_battles`` command, so it is fully vectorised (1,000,000 battles in well under a
second).

The model, for a pair drawn uniformly (or by ``pair_weights``) and shown in random order:

* ``p = 1 / (1 + 10**((R_bottom - R_top) / 400 - logit10(top_slot_p)))`` is the expected score
  of the top completion (a win counts 1, a tie 1/2); ``top_slot_p`` is that score between two
  equal models (0.5 = no position bias).
* A tie happens with probability ``tau = min(tie_rate, 2 * min(p, 1 - p))``, the top wins with
  ``p - tau / 2`` and the bottom wins with ``1 - p - tau / 2``. So the expected score is exactly
  ``p``: the model under which counting a tie as half a win is unbiased. (For pairs more than
  about 500 points apart at ``tie_rate=0.1`` the tie rate is lowered to keep this true.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, GroupedCounts, group_battles
from analysis.scale import LOG_ODDS_PER_POINT

__all__ = ["SimulatedBattles", "simulate_battles"]


@dataclass(frozen=True)
class SimulatedBattles:
    """One row per battle: ``a`` on top, ``b`` at the bottom, ``outcome`` an ``OUTCOME_*`` code."""

    models: tuple[str, ...]
    ratings: np.ndarray  # the true ratings used, one per model (400-point scale)
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    top_slot_p: float
    tie_rate: float

    def __len__(self) -> int:
        return len(self.a)

    def model_a(self) -> list[str]:
        """Top model keys, one per battle."""
        names = np.asarray(self.models, dtype=object)
        return [str(x) for x in names[self.a]]

    def model_b(self) -> list[str]:
        """Bottom model keys, one per battle."""
        names = np.asarray(self.models, dtype=object)
        return [str(x) for x in names[self.b]]

    def grouped(self) -> GroupedCounts:
        """The battles grouped into counts (fast path, no strings involved)."""
        return group_battles(self.a, self.b, self.outcome, models=self.models)


def _pair_probabilities(pair_weights: np.ndarray, k: int) -> np.ndarray:
    w = np.asarray(pair_weights, dtype=float)
    iu, ju = np.triu_indices(k, 1)
    if w.shape == (k, k):
        w = w[iu, ju] + w[ju, iu]
    elif w.shape != (len(iu),):
        raise ValueError("pair_weights must be a (K, K) matrix or one weight per pair i < j")
    if np.any(w < 0) or not np.all(np.isfinite(w)) or w.sum() <= 0:
        raise ValueError("pair_weights must be finite, non-negative and not all zero")
    return np.asarray(w / w.sum())


def simulate_battles(
    ratings: Mapping[str, float] | np.ndarray,
    n: int,
    *,
    tie_rate: float = 0.0,
    top_slot_p: float = 0.5,
    pair_weights: np.ndarray | None = None,
    seed: int | np.random.Generator | None = None,
) -> SimulatedBattles:
    """Draw ``n`` battles from a Bradley-Terry model (see the module docstring).

    ``ratings`` is either ``{model key: rating}`` or an array (models are then named
    ``model-000``, ``model-001``, ...). ``pair_weights`` (optional) is a ``(K, K)`` matrix or a
    vector over the pairs ``i < j`` in ``numpy.triu_indices`` order; the default is uniform over
    pairs. The position (top or bottom) is a fair coin for every battle. Long because it
    checks every argument before it draws.
    """
    if isinstance(ratings, Mapping):
        models = tuple(str(m) for m in ratings)
        r = np.array([float(ratings[m]) for m in ratings], dtype=float)
    else:
        r = np.asarray(ratings, dtype=float).ravel()
        width = max(3, len(str(max(len(r) - 1, 0))))
        models = tuple(f"model-{i:0{width}d}" for i in range(len(r)))
    k = len(r)
    if k < 2:
        raise ValueError("need at least two models to simulate battles")
    if not np.all(np.isfinite(r)):
        raise ValueError("ratings must be finite")
    if n < 0:
        raise ValueError("n must be non-negative")
    if not 0.0 <= tie_rate < 1.0:
        raise ValueError("tie_rate must be in [0, 1)")
    if not 0.0 < top_slot_p < 1.0:
        raise ValueError("top_slot_p must be in (0, 1)")
    rng = np.random.default_rng(seed)

    iu, ju = np.triu_indices(k, 1)
    if pair_weights is None:
        pair = rng.integers(0, len(iu), size=n)
    else:
        cdf = np.cumsum(_pair_probabilities(pair_weights, k))
        pair = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
        np.minimum(pair, len(iu) - 1, out=pair)
    swap = rng.random(n) < 0.5
    a = np.where(swap, ju[pair], iu[pair])
    b = np.where(swap, iu[pair], ju[pair])

    gamma = np.log(top_slot_p / (1.0 - top_slot_p))
    p = 1.0 / (1.0 + np.exp(-((r[a] - r[b]) * LOG_ODDS_PER_POINT + gamma)))
    tau = np.minimum(tie_rate, 2.0 * np.minimum(p, 1.0 - p))
    u = rng.random(n)
    outcome = np.full(n, OUTCOME_B, dtype=np.int8)
    p_top = p - 0.5 * tau
    outcome[u < p_top] = OUTCOME_A
    outcome[(u >= p_top) & (u < p_top + tau)] = OUTCOME_TIE
    return SimulatedBattles(
        models=models,
        ratings=r,
        a=a.astype(np.int64),
        b=b.astype(np.int64),
        outcome=outcome,
        top_slot_p=float(top_slot_p),
        tie_rate=float(tie_rate),
    )
