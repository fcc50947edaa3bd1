"""Reads for pair serving: the per-process serving state, fitted latencies, the sampling table.

The serving state (which models can be served, their providers, their latency fits and the
pair-wait matrix) is rebuilt at most every ``STATE_SECONDS`` per process, and at once in
this process when a provider, the sampling configuration, a fit or a catalogue model is
saved (signals). Drawing a pair then
costs a softmax over the cached matrix and one weighted choice.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict

import numpy as np
from django.db.models import F, Window
from django.db.models.functions import RowNumber

from analysis.active_sampling import fit_pair_ratings, pair_information, pair_tables
from analysis.latency import (
    DEFAULT_PRIOR,
    LogNormalFit,
    LogNormalPrior,
    PairLatency,
    experienced_latency_mean,
    experienced_latency_quantiles,
    model_shares,
    pair_distribution,
    pair_latency_matrix,
)
from ingest.models import CompletionLog
from leaderboard.models import RatingConfig
from leaderboard.selectors import overall_counts, published_snapshot_id

from .engine import Slot
from .models import SERVED_VISIBILITIES, ModelProvider, PairDistribution, SamplingConfig
from .providers import ProviderConfig

# Distinct tag requests cached per state; clients choose tags freely, so bound it.
_MAX_CACHED_TAG_SETS = 64
# Seconds a process serves from its state before reloading it (saves here reload at once).
STATE_SECONDS = 5.0


@dataclass
class ServingState:
    """What the endpoint samples from. ``expected`` is None with fewer than two models."""

    slots: tuple[Slot, ...]
    fits: tuple[LogNormalFit, ...]
    expected: np.ndarray | None
    tau: float  # math.inf = uniform
    floor: float
    distribution_id: int | None
    # K x K information term from the published board (None: none published or lambda 0).
    information: np.ndarray | None = None
    information_weight: float = 0.0
    loaded_at: float = field(default_factory=time.monotonic)
    _probs: dict[tuple[bool, frozenset[str]], np.ndarray | None] = field(
        default_factory=dict, repr=False
    )

    def active(self, *, chat_only: bool, tags: frozenset[str]) -> list[bool]:
        return [
            (not chat_only or s.provider.is_chat) and (not tags or bool(s.tags & tags))
            for s in self.slots
        ]

    def probabilities(
        self, *, chat_only: bool, tags: frozenset[str] = frozenset()
    ) -> np.ndarray | None:
        """K x K pair probabilities (upper triangle) over the models that qualify, or None
        when fewer than two do. ``chat_only`` for edits; ``tags`` = the client's modelTags."""
        key = (chat_only, tags)
        if key in self._probs:
            return self._probs[key]
        active = self.active(chat_only=chat_only, tags=tags)
        probs = None
        if self.expected is not None and sum(active) >= 2:
            probs = pair_distribution(
                self.expected,
                tau=self.tau,
                floor=self.floor,
                active=active,
                information=self.information,
                information_weight=self.information_weight,
            )
        if len(self._probs) < _MAX_CACHED_TAG_SETS:
            self._probs[key] = probs
        return probs


def sampling_tau(config: SamplingConfig) -> float:
    return math.inf if config.tau_seconds is None else float(config.tau_seconds)


def served_providers() -> list[ModelProvider]:
    """Enabled providers of public or private catalogue models (key present or not)."""
    return list(
        ModelProvider.objects.filter(enabled=True, model__visibility__in=SERVED_VISIBILITIES)
        .select_related("model")
        .order_by("model__key")
    )


def slot_for(provider: ModelProvider) -> Slot:
    return Slot(
        model_id=provider.model_id,
        key=provider.model.key,
        provider=ProviderConfig(
            provider_id=provider.pk,
            kind=provider.kind,
            base_url=provider.base_url,
            remote_model=provider.remote_model,
            api_key_env=provider.api_key_env,
            timeout_seconds=provider.timeout_seconds,
            max_concurrency=provider.max_concurrency,
        ),
        tags=provider.tag_set,
    )


def latest_distribution() -> PairDistribution | None:
    return PairDistribution.objects.order_by("-id").first()


def fits_for(
    slots: list[Slot] | tuple[Slot, ...], dist: PairDistribution | None, *, prior_weight: float
) -> tuple[LogNormalFit, ...]:
    """Each model's fit from the newest latency fit; a model it does not know (added since)
    gets that fit's pooled prior, or the default prior when nothing was fitted yet."""
    if dist is None:
        prior = LogNormalPrior(DEFAULT_PRIOR.mu, DEFAULT_PRIOR.sigma, prior_weight)
        known: dict[int, LogNormalFit] = {}
    else:
        prior = LogNormalPrior(dist.prior_mu, dist.prior_sigma, dist.prior_weight)
        known = {
            int(f["model_id"]): LogNormalFit(float(f["mu"]), float(f["sigma"]), int(f["n"]))
            for f in dist.fits
        }
    return tuple(known.get(s.model_id, LogNormalFit(prior.mu, prior.sigma, 0)) for s in slots)


def board_information(keys: Sequence[str], *, weight: float) -> np.ndarray | None:
    """The information term (``analysis.active_sampling``) for these models, from the
    published overall board's counts; None when ``weight`` is 0, fewer than two models, or
    no board is published (then the sampler is latency-aware only).

    Ratings are refitted from the board's counts (log-odds, one tied pseudo-vote per pair
    for a finite fit), so private models, which the public board hides, count too. A model
    not on the board (under the vote minimum, or new) has no counts, the board's mean
    rating, and is cold. Cached per published snapshot and model list.
    """
    sid = published_snapshot_id() if weight > 0 and len(keys) >= 2 else None
    if sid is None:
        return None
    cache_key = (sid, tuple(keys))
    cached = _information_cache.get(cache_key)
    if cached is not None:
        return cached
    counts = overall_counts(snapshot_id=sid)
    if counts is None:
        return None
    wins, games = pair_tables(counts)
    theta, _ = fit_pair_ratings(wins, prior_votes=1.0)
    where = {key: i for i, key in enumerate(counts.models)}
    idx = np.array([where.get(key, -1) for key in keys])
    on = idx >= 0
    k = len(keys)
    sub_games = np.zeros((k, k))
    sub_games[np.ix_(on, on)] = games[np.ix_(idx[on], idx[on])]
    sub_theta = np.zeros(k)
    sub_theta[on] = theta[idx[on]]
    sub_theta[~on] = sub_theta[on].mean() if on.any() else 0.0
    minimum = RatingConfig.current().min_model_votes
    info = pair_information(sub_games, sub_theta, cold=sub_games.sum(axis=1) < minimum)
    _information_cache.clear()  # one entry: the published board and the served models
    _information_cache[cache_key] = info
    return info


_information_cache: dict[tuple[int, tuple[str, ...]], np.ndarray] = {}


def _load_state() -> ServingState:
    config = SamplingConfig.current()
    # A provider whose key variable is missing in this process would fail every call:
    # it is not drawn at all (the admin shows the key as missing).
    slots = tuple(slot_for(p) for p in served_providers() if p.key_present)
    dist = latest_distribution()
    fits = fits_for(slots, dist, prior_weight=config.prior_weight)
    expected = pair_latency_matrix(fits).expected if len(slots) >= 2 else None
    return ServingState(
        slots=slots,
        fits=fits,
        expected=expected,
        tau=sampling_tau(config),
        floor=config.floor,
        distribution_id=dist.pk if dist else None,
        information=board_information([s.key for s in slots], weight=config.information_weight),
        information_weight=config.information_weight,
    )


_state: ServingState | None = None
_state_lock = threading.Lock()


def clear_serving_state() -> None:
    global _state, _serves_pairs
    _state = None
    _information_cache.clear()
    _serves_pairs = None


# (checked at, answer) of `serves_pairs`; votes read it, so it is kept apart from the state.
_serves_pairs: tuple[float, bool] | None = None
SERVES_PAIRS_SECONDS = 30.0


def serves_pairs() -> bool:
    """Whether this server serves pairs (an enabled provider of a served model): votes are
    then bound to served pairs (ingest/binding.py, VOTE_BINDING=auto). One indexed query
    per process every SERVES_PAIRS_SECONDS, at once after a provider is saved here."""
    global _serves_pairs
    known = _serves_pairs
    if known is not None and time.monotonic() - known[0] < SERVES_PAIRS_SECONDS:
        return known[1]
    answer = ModelProvider.objects.filter(
        enabled=True, model__visibility__in=SERVED_VISIBILITIES
    ).exists()
    _serves_pairs = (time.monotonic(), answer)
    return answer


def serving_state() -> ServingState:
    """This process's serving state, reloaded when older than STATE_SECONDS.

    One thread reloads while the others keep using the previous state; only the very first
    load makes callers wait.
    """
    global _state
    state = _state
    if state is not None and time.monotonic() - state.loaded_at < STATE_SECONDS:
        return state
    if not _state_lock.acquire(blocking=state is None):
        assert state is not None  # only a non-blocking acquire can fail
        return state  # another thread is reloading; the old state is seconds old
    try:
        current = _state
        if current is None or current is state:
            current = _state = _load_state()
        return current
    finally:
        _state_lock.release()


# --- Latency fitting inputs ------------------------------------------------------------


def recent_latencies(
    *, model_ids: list[int], since: datetime, per_model: int
) -> dict[int, list[float]]:
    """Successful latencies (seconds) of completions this server served since ``since``,
    at most the newest ``per_model`` of each model."""
    ranked = (
        CompletionLog.objects.filter(
            served_by_us=True,
            succeeded=True,
            latency_ms__gt=0,
            received_at__gte=since,
            model_id__in=model_ids,
        )
        .annotate(
            rank=Window(RowNumber(), partition_by=[F("model_id")], order_by=F("received_at").desc())
        )
        .filter(rank__lte=per_model)
        .values_list("model_id", "latency_ms")
    )
    out: dict[int, list[float]] = {m: [] for m in model_ids}
    for model_id, latency_ms in ranked:
        if latency_ms is not None:
            out[model_id].append(latency_ms / 1000.0)
    return out


# --- What the admin shows --------------------------------------------------------------


class ModelRow(TypedDict):
    """One model in the admin's sampling table."""

    key: str
    n: int
    mu: float
    sigma: float
    median_s: float
    battles: float  # fraction of battles this model takes part in (the column sums to 2)
    battles_pct: float
    vs_uniform: float


class PairRow(TypedDict):
    """One pair in the admin's sampling table."""

    a: str
    b: str
    p: float
    vs_uniform: float
    expected_s: float
    median_s: float


@dataclass(frozen=True)
class SamplingTable:
    """Pair probabilities and waits for a set of models under one (tau, floor)."""

    models: list[ModelRow]
    pairs: list[PairRow]
    median_wait_s: float
    uniform_median_wait_s: float
    p90_wait_s: float
    uniform_p90_wait_s: float
    mean_wait_s: float
    uniform_mean_wait_s: float


def _pair_rows(keys: list[str], probs: np.ndarray, lat: PairLatency) -> list[PairRow]:
    """Every pair, the likeliest first."""
    k = len(keys)
    share_uniform = 1.0 / (k * (k - 1) / 2)
    pairs = [
        PairRow(
            a=keys[i],
            b=keys[j],
            p=float(probs[i, j]),
            vs_uniform=float(probs[i, j] / share_uniform),
            expected_s=float(lat.expected[i, j]),
            median_s=float(lat.median[i, j]),
        )
        for i in range(k)
        for j in range(i + 1, k)
    ]
    pairs.sort(key=lambda p: -p["p"])
    return pairs


def _model_rows(
    keys: list[str], fits: tuple[LogNormalFit, ...] | list[LogNormalFit], probs: np.ndarray
) -> list[ModelRow]:
    k = len(keys)
    shares = model_shares(probs)
    return [
        ModelRow(
            key=keys[i],
            n=fits[i].n,
            mu=fits[i].mu,
            sigma=fits[i].sigma,
            median_s=fits[i].median,
            battles=float(shares[i]),
            battles_pct=100.0 * float(shares[i]),
            vs_uniform=float(shares[i] / (2.0 / k)),
        )
        for i in range(k)
    ]


def sampling_table(
    keys: list[str],
    fits: tuple[LogNormalFit, ...] | list[LogNormalFit],
    *,
    tau: float,
    floor: float,
    information_weight: float = 0.0,
) -> SamplingTable | None:
    """The pair table the endpoint draws from (None with fewer than two models); with
    ``information_weight`` > 0 it includes the published board's information term."""
    if len(keys) < 2:
        return None
    lat = pair_latency_matrix(fits)
    probs = pair_distribution(
        lat.expected,
        tau=tau,
        floor=floor,
        information=board_information(keys, weight=information_weight),
        information_weight=information_weight,
    )
    uniform = pair_distribution(lat.expected, tau=math.inf, floor=floor)
    med, p90 = experienced_latency_quantiles(fits, probs, [0.5, 0.9])
    umed, up90 = experienced_latency_quantiles(fits, uniform, [0.5, 0.9])
    return SamplingTable(
        models=_model_rows(keys, fits, probs),
        pairs=_pair_rows(keys, probs, lat),
        median_wait_s=float(med),
        uniform_median_wait_s=float(umed),
        p90_wait_s=float(p90),
        uniform_p90_wait_s=float(up90),
        mean_wait_s=experienced_latency_mean(lat.expected, probs),
        uniform_mean_wait_s=experienced_latency_mean(lat.expected, uniform),
    )
