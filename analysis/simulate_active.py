"""Simulated arena for comparing pair samplers: votes to a confident board, wait, bias.

One arena (``ActiveWorld``) is run under one sampler (``Sampler``) in blocks of ``block``
votes. Before each block the *published board* is refitted from the votes so far (models
with at least ``min_votes`` votes, as the product's board), the stopping criteria are checked
on it, and the sampler builds its pair table from the board and this block's latencies:

    pi_ij = floor / P + (1 - floor) * normalise(exp(-(1 - lambda) S_ij / tau) * info_ij^lambda)

``S_ij`` the slower of the two models' latencies in this block (log-normal load around each
model's median, sd ``latency_sd`` in log-seconds, as ``simulate_sampler``), ``info_ij`` the
board's information term (``analysis.active_sampling.pair_information``; a model under the
vote minimum is cold: not on the board, counts 0, rating = the board mean). Uniform is
``tau = inf, lambda = 0``; today's latency-aware sampler is ``lambda = 0``.

Outcomes: the top completion wins with ``sigma(c (R_a - R_b) - beta (d_a - d_b))``, ``d`` a
model's block log-latency minus its usual (median) one: a completion slower than its model
usually is gets accepted less often (a model's typical speed is part of its rating, so the
ratings are the truth up to the averaging over blocks). Positions are fair coins, no ties. A battle's
wait is the slower of the two completions, each its model's block latency times a per-battle
log-normal factor (sd ``battle_sd``). The newcomer (last model) joins after ``entry`` votes.

Criteria on the board, checked before every block once every model is on it (so a
model's votes are counted at ``block`` resolution):

* (a) top ranks resolved: the 95% intervals of the models ranked 1..top+1 do not overlap
  their neighbours';
* (b) every model's 95% interval is narrower than ``width`` points.

Both are checked on two boards: the unweighted fit (the product's default) with Fisher
intervals, and the inverse-propensity-weighted fit (weights 1 / (P pi), the ``propensity``
weights; 1 for the uniform sampler) with sandwich intervals (``fit_pair_ratings``:
``pinv(H) M pinv(H)``). Both mean-centred; a cheap stand-in for the board's bootstrap, the
same for every sampler. The sampler's information term reads the unweighted board.
Unweighted, a latency-aware sampler's board is biased (see the errors returned). Truth is the uniform-sampler target (as ``simulate_sampler``): the Bradley-Terry
fit of the pair scores averaged over blocks, every pair weighted equally; the final fit's
error against it is returned unweighted and with inverse-propensity weights 1 / (P pi).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from analysis.active_sampling import COLD_WEIGHT, TOP_WEIGHT, fit_pair_ratings, pair_information
from analysis.latency import pair_distribution
from analysis.scale import LOG_ODDS_PER_POINT
from analysis.simulate_users import fit_pair_scores

__all__ = ["ActiveRun", "ActiveWorld", "Sampler", "run_arena"]

_Z95 = 1.959963984540054


@dataclass(frozen=True)
class ActiveWorld:
    """The arena: true ratings (points) and median latencies (s); the newcomer is last."""

    ratings: tuple[float, ...]
    median_latency: tuple[float, ...]
    entry: int = 2000
    horizon: int = 30_000
    block: int = 200
    latency_sd: float = 0.6
    battle_sd: float = 0.3
    latency_effect: float = 0.7
    min_votes: int = 30
    top: int = 3
    width: float = 30.0


@dataclass(frozen=True)
class Sampler:
    name: str
    tau: float = math.inf
    floor: float = 0.2
    information_weight: float = 0.0
    top_weight: float = TOP_WEIGHT
    cold_weight: float = COLD_WEIGHT


@dataclass(frozen=True)
class ActiveRun:
    """One arena under one sampler. Vote counts are None when not reached by the horizon."""

    votes_top: int | None  # criterion (a) on the unweighted board
    votes_width: int | None  # (b), unweighted
    votes_top_weighted: int | None  # (a) on the inverse-propensity-weighted board
    votes_width_weighted: int | None
    newcomer_to_minimum: int | None  # votes cast after the newcomer joined
    wait_median: float
    wait_p90: float
    error: np.ndarray  # final unweighted fit - truth, points, per model
    error_weighted: np.ndarray  # the same with inverse-propensity weights


@dataclass
class _Tally:
    """Votes so far: wins (K x K), inverse-propensity-weighted wins, squared weights."""

    wins: np.ndarray
    wins_w: np.ndarray
    squared: np.ndarray


@dataclass
class _Board:
    on: np.ndarray  # models on the board (>= min_votes)
    theta: np.ndarray  # log-odds, mean 0 over the board, 0 elsewhere
    se: np.ndarray  # points, inf off the board
    games: np.ndarray  # the board's pair counts (0 off the board)


def _board(
    wins: np.ndarray, games: np.ndarray, on: np.ndarray, squared: np.ndarray | None
) -> _Board:
    k = len(wins)
    theta, se = np.zeros(k), np.full(k, np.inf)
    board_games = np.zeros((k, k))
    idx = np.flatnonzero(on)
    if len(idx) >= 2:
        cell = np.ix_(idx, idx)
        t, cov = fit_pair_ratings(wins[cell], squared=None if squared is None else squared[cell])
        theta[idx] = t
        se[idx] = np.sqrt(np.maximum(np.diag(cov), 0.0)) / LOG_ODDS_PER_POINT
        board_games[cell] = games[cell]
    return _Board(on=on, theta=theta, se=se, games=board_games)


def _boards(tally: _Tally, active: np.ndarray, min_votes: int) -> tuple[_Board, _Board]:
    """The published board unweighted and with inverse-propensity weights."""
    games = tally.wins + tally.wins.T
    on = active & (games.sum(axis=1) >= min_votes)
    return (
        _board(tally.wins, games, on, None),
        _board(tally.wins_w, games, on, tally.squared),
    )


def _criteria(board: _Board, world: ActiveWorld) -> tuple[bool, bool]:
    if not board.on.all():
        return False, False
    return _top_resolved(board, world.top), bool(np.all(2 * _Z95 * board.se < world.width))


def _top_resolved(board: _Board, top: int) -> bool:
    order = np.argsort(-board.theta[board.on])
    r = board.theta[board.on][order] / LOG_ODDS_PER_POINT
    half = _Z95 * board.se[board.on][order]
    m = min(top + 1, len(r))
    return bool(np.all(r[1:m] + half[1:m] < r[: m - 1] - half[: m - 1]))


def _table(
    world: ActiveWorld,
    sampler: Sampler,
    board: _Board,
    active: np.ndarray,
    log_lat: np.ndarray,
) -> np.ndarray:
    slow = np.exp(np.maximum(log_lat[:, None], log_lat[None, :]))
    info = None
    if sampler.information_weight > 0:
        info = pair_information(
            board.games,
            board.theta,
            cold=active & ~board.on,
            top=world.top,
            top_weight=sampler.top_weight,
            cold_weight=sampler.cold_weight,
        )
    return pair_distribution(
        slow,
        tau=sampler.tau,
        floor=sampler.floor,
        active=active,
        information=info,
        information_weight=sampler.information_weight,
    )


def run_arena(world: ActiveWorld, sampler: Sampler, seed: int) -> ActiveRun:
    """Run ``world`` under ``sampler`` (see the module docstring)."""
    rng = np.random.default_rng(seed)
    r = np.asarray(world.ratings, dtype=float)
    mu = np.log(np.asarray(world.median_latency, dtype=float))
    k = len(r)
    blocks = world.horizon // world.block
    loads = mu[None, :] + world.latency_sd * rng.standard_normal((blocks, k))
    tally = _Tally(np.zeros((k, k)), np.zeros((k, k)), np.zeros((k, k)))
    waits: list[np.ndarray] = []
    reached: dict[str, int | None] = dict.fromkeys(("top", "width", "top_w", "width_w"))
    to_min = None
    newcomer_votes = 0
    for step in range(blocks):
        cast = step * world.block
        active = np.ones(k, dtype=bool)
        active[-1] = cast >= world.entry
        board, weighted = _boards(tally, active, world.min_votes)
        hits = (*_criteria(board, world), *_criteria(weighted, world))
        for name, hit in zip(reached, hits, strict=True):
            if hit and reached[name] is None:
                reached[name] = cast
        probs = _table(world, sampler, board, active, loads[step])
        ii, jj = np.nonzero(probs)
        p = probs[ii, jj]
        pick = rng.choice(len(p), size=world.block, p=p / p.sum())
        i, j = ii[pick], jj[pick]
        dev = loads[step] - mu
        logit = LOG_ODDS_PER_POINT * (r[i] - r[j]) - world.latency_effect * (dev[i] - dev[j])
        i_won = rng.random(world.block) < 1.0 / (1.0 + np.exp(-logit))
        winner, loser = np.where(i_won, i, j), np.where(i_won, j, i)
        weight = 1.0 / (len(p) * p[pick])
        np.add.at(tally.wins, (winner, loser), 1.0)
        np.add.at(tally.wins_w, (winner, loser), weight)
        np.add.at(tally.squared, (i, j), weight**2)
        np.add.at(tally.squared, (j, i), weight**2)
        lat = np.exp(
            loads[step, np.stack([i, j])] + world.battle_sd * rng.standard_normal((2, len(i)))
        )
        waits.append(lat.max(axis=0))
        if to_min is None and active[-1]:
            seen = newcomer_votes + np.cumsum((i == k - 1) | (j == k - 1))
            there = np.flatnonzero(seen >= world.min_votes)
            if len(there):
                to_min = cast - world.entry + int(there[0]) + 1
            newcomer_votes = int(seen[-1])
    all_waits = np.concatenate(waits)
    return ActiveRun(
        votes_top=reached["top"],
        votes_width=reached["width"],
        votes_top_weighted=reached["top_w"],
        votes_width_weighted=reached["width_w"],
        newcomer_to_minimum=to_min,
        wait_median=float(np.median(all_waits)),
        wait_p90=float(np.quantile(all_waits, 0.9)),
        error=_error(tally.wins, r, loads - mu, world),
        error_weighted=_error(tally.wins_w, r, loads - mu, world),
    )


def _error(wins: np.ndarray, r: np.ndarray, dev: np.ndarray, world: ActiveWorld) -> np.ndarray:
    k = len(r)
    iu, ju = np.triu_indices(k, 1)
    d_lat = dev[:, iu] - dev[:, ju]
    logit = LOG_ODDS_PER_POINT * (r[iu] - r[ju])[None, :] - world.latency_effect * d_lat
    truth = fit_pair_scores((1.0 / (1.0 + np.exp(-logit))).mean(axis=0), np.ones(len(iu)), k)
    theta, _ = fit_pair_ratings(wins)
    out: np.ndarray = theta / LOG_ODDS_PER_POINT - (truth - truth.mean())
    return out
