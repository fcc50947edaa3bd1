"""Pair serving: draw two models, ask both at once, clean up, log, answer; fit latencies.

`create_pair` and `create_edit_pair` do, in order:

1. take the serving state (models with an enabled provider, their latency fits, the pair
   distribution under the current tau and floor; see ``selectors``);
2. trim the context (``analysis.fim.trim_context``: last 6,144 estimated tokens of the
   prefix, first 2,048 of the suffix);
3. draw a pair and its top/bottom order (``analysis.latency.sample_pair``);
4. ask both providers at once (``engine``); a failed side is replaced by a substitute drawn
   from the same distribution given the other side's model, while the deadline allows;
5. clean up both answers (``prompts``);
6. log every call with its latency through ``ingest.services.record_completions``
   (``served_by_us=True``, ``succeeded``) on a database thread, without waiting for it;
   code is stored only under Research privacy, by that function;
7. answer in the extension's shape.

`fit_pair_distribution` is the latency fit run by the Celery task and the admin.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
from django.conf import settings
from django.utils import timezone

from analysis.fim import estimate_tokens, trim_context
from analysis.latency import fit_lognormal, pooled_prior, sample_pair
from ingest.services import record_completions
from ingest.votes import CompletionIn

from .dbwork import submit_db
from .engine import (
    Attempt,
    PairOutcome,
    PairTimeout,
    PickSubstitute,
    PromptFor,
    Slot,
    engine,
)
from .models import PairDistribution, SamplingConfig
from .prompts import clean_completion, clean_edit, completion_prompt, edit_prompt, prompt_text
from .providers import Generation, Prompt
from .selectors import (
    ServingState,
    clear_serving_state,
    recent_latencies,
    sampling_table,
    sampling_tau,
    served_providers,
    serving_state,
    slot_for,
)

log = logging.getLogger(__name__)

# Edits: the original server's sampling settings (its constants TEMPERATURE and TOP_P).
EDIT_TEMPERATURE = 0.3
EDIT_TOP_P = 0.9
# Failed sides replaced per pair at most; each substitute needs the deadline to allow it.
MAX_SUBSTITUTES = 2
# Estimated tokens (4 bytes each) a selection to edit may have; it is sent whole.
MAX_EDIT_TOKENS = 8192
# Latency fits kept (newest); older ones are deleted after each fit.
KEEP_FITS = 200


# --- Errors ---------------------------------------------------------------------------


class ServingError(Exception):
    """A pair that cannot be served. ``status``/``code``/``message`` become the API error."""

    status = 503
    code = "pair_unavailable"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class PairUnavailable(ServingError):
    status = 503
    code = "pair_unavailable"


class ProviderFailed(ServingError):
    status = 502
    code = "provider_error"


class ProviderTimedOut(ServingError):
    status = 504
    code = "provider_timeout"


# --- Requests -------------------------------------------------------------------------


@dataclass(frozen=True)
class PairRequest:
    """`/create_pair`, validated."""

    pair_id: str
    user_id: str
    prefix: str
    suffix: str
    privacy: str
    max_lines: int | None = 5
    max_tokens: int = 512
    temperature: float = 0.5
    top_p: float = 0.9
    model_tags: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class EditPairRequest:
    """`/create_edit_pair`, validated."""

    pair_id: str
    user_id: str
    prefix: str
    suffix: str
    code_to_edit: str
    user_input: str
    language: str
    privacy: str
    model_tags: frozenset[str] = field(default_factory=frozenset)


# --- Drawing and serving ----------------------------------------------------------------


def _picker(state: ServingState, probs: np.ndarray, rng: np.random.Generator) -> PickSubstitute:
    """Substitute for a failed side: a model k != partner, not yet failed, drawn with
    probability proportional to p(partner, k) -- the pair distribution given the partner."""
    index = {slot.model_id: i for i, slot in enumerate(state.slots)}
    upper = np.triu(probs, 1)
    symmetric = upper + upper.T

    def pick(partner: Slot, excluded: frozenset[int]) -> Slot | None:
        weights = symmetric[index[partner.model_id]].copy()
        for model_id in excluded:
            weights[index[model_id]] = 0.0
        total = weights.sum()
        if not total > 0:
            return None
        return state.slots[int(rng.choice(weights.size, p=weights / total))]

    return pick


def _serve(
    state: ServingState,
    probs: np.ndarray,
    rng: np.random.Generator,
    *,
    prompt_for: PromptFor,
    pair_id: str,
) -> PairOutcome:
    top, bottom = sample_pair(probs, rng)
    first = (state.slots[top], state.slots[bottom])
    try:
        outcome = engine().serve_pair(
            first,
            prompt_for=prompt_for,
            pick_substitute=_picker(state, probs, rng),
            budget_s=settings.SERVING_PAIR_DEADLINE_SECONDS,
            min_substitute_s=settings.SERVING_SUBSTITUTE_MIN_SECONDS,
            max_substitutes=MAX_SUBSTITUTES,
        )
    except PairTimeout:
        log.error("pair %r: provider calls did not settle within the deadline", pair_id)
        raise ProviderTimedOut(
            "The models did not answer within the pair deadline "
            f"({settings.SERVING_PAIR_DEADLINE_SECONDS:g} s)."
        ) from None
    for attempt in outcome.attempts:
        if attempt.error is not None:
            # Model key, provider kind and a fixed reason only: no URL, body, code or key.
            log.warning(
                "pair %r: %s (%s) failed after %.2f s: %s",  # %r: the id is client text
                pair_id,
                attempt.slot.key,
                attempt.slot.provider.kind,
                attempt.latency_s,
                attempt.error,
            )
    return outcome


def _failure(outcome: PairOutcome) -> ServingError:
    attempt = outcome.failure
    assert attempt is not None and attempt.error is not None
    what = {
        "timeout": "did not answer in time",
        "busy": "is at its concurrency limit",
        "no_key": "has no API key configured on this server",
        "connect": "could not be reached",
        "http": f"answered with an error ({attempt.error.detail})",
        "bad_response": "answered without a completion",
    }.get(attempt.error.reason, "failed")
    message = (
        f"Model '{attempt.slot.key}' {what}, and no substitute model could be asked within "
        f"the {settings.SERVING_PAIR_DEADLINE_SECONDS:g} s pair deadline. Try again."
    )
    if attempt.error.reason == "timeout":
        return ProviderTimedOut(message)
    return ProviderFailed(message)


@dataclass(frozen=True)
class _UnshownCompletion(CompletionIn):
    """A call whose text was not shown (failed, or its pair failed): no code to keep."""

    @property
    def keep_code(self) -> bool:
        return False


def _log_calls(
    outcome: PairOutcome,
    *,
    pair_id: str,
    user_id: str,
    privacy: str,
    file_type: str,
    shown: dict[str, tuple[str, str]],
) -> None:
    """One CompletionLog per provider call. ``shown`` maps the completion id of each shown
    side to (prompt, text); only those carry code, and only Research keeps it."""
    ids = [a.completion_id if a is not None else "" for a in outcome.sides]
    rows = []
    for attempt in outcome.attempts:
        is_shown = attempt.completion_id in shown
        prompt, text = shown.get(attempt.completion_id, ("", ""))
        rows.append(
            (CompletionIn if is_shown else _UnshownCompletion)(
                completion_id=attempt.completion_id,
                model_id=attempt.slot.model_id,
                user_id=user_id,
                privacy=privacy,
                pair_completion_id=ids[1 - attempt.position] if is_shown else "",
                pair_id=pair_id,
                pair_index=attempt.position if is_shown else None,
                latency_ms=attempt.latency_s * 1000.0,
                file_type=file_type,
                served_by_us=True,
                succeeded=attempt.ok,
                prompt=prompt,
                completion=text,
            )
        )

    # Written after the answer is sent (see dbwork): the answer does not depend on it.
    submit_db(record_completions, completions=rows)


def _draw(state: ServingState, *, chat_only: bool, tags: frozenset[str]) -> np.ndarray:
    probs = state.probabilities(chat_only=chat_only, tags=tags)
    if probs is not None:
        return probs
    kind = "chat models with a provider" if chat_only else "models with a provider"
    if tags:
        raise PairUnavailable(
            f"Fewer than two {kind} carry any of the requested modelTags "
            f"({', '.join(sorted(tags))}); this server cannot make a pair for them."
        )
    raise PairUnavailable(
        f"Fewer than two {kind} are enabled on this server, so no pair can be served. "
        "An admin adds providers under Pair serving → Model providers."
    )


def _timestamp() -> int:
    # Seconds, as the original server sent (the extension stores it as an INTEGER).
    return int(time.time())


def create_pair(*, request: PairRequest, rng: np.random.Generator | None = None) -> dict:
    """Serve one completion pair; returns ``{"pairId", "completionItems": [top, bottom]}``."""
    state = serving_state()
    probs = _draw(state, chat_only=False, tags=request.model_tags)
    rng = rng if rng is not None else np.random.default_rng()
    prefix, suffix = trim_context(request.prefix, request.suffix)
    # Built here, not on the engine's loop thread: that thread does I/O for every request.
    prompts = {
        chat: completion_prompt(chat=chat, prefix=prefix, suffix=suffix) for chat in (True, False)
    }
    gen = Generation(
        max_tokens=min(request.max_tokens, settings.SERVING_MAX_OUTPUT_TOKENS),
        temperature=request.temperature,
        top_p=request.top_p,
    )

    def prompt_for(slot: Slot) -> tuple[Prompt, Generation]:
        return prompts[slot.provider.is_chat], gen

    outcome = _serve(state, probs, rng, prompt_for=prompt_for, pair_id=request.pair_id)
    shown: dict[str, tuple[str, str]] = {}
    if outcome.ok:
        for side in outcome.sides:
            assert side is not None and side.raw is not None
            chat = side.slot.provider.is_chat
            text = clean_completion(
                side.raw, chat=chat, prefix=prefix, suffix=suffix, max_lines=request.max_lines
            )
            shown[side.completion_id] = (prompt_text(prompts[chat]), text)
    _log_calls(
        outcome,
        pair_id=request.pair_id,
        user_id=request.user_id,
        privacy=request.privacy,
        file_type="",
        shown=shown,
    )
    if not outcome.ok:
        raise _failure(outcome)
    top, bottom = outcome.sides
    stamp = _timestamp()

    def item(side: Attempt, other: Attempt) -> dict:
        prompt, text = shown[side.completion_id]
        return {
            "completionId": side.completion_id,
            "userId": request.user_id,
            "timestamp": stamp,
            "prompt": prompt,
            "completion": text,
            "model": side.slot.key,
            "pairCompletionId": other.completion_id,
            "pairIndex": side.position,
            "latency": round(side.latency_s, 4),
            "prefix": prefix,
            "suffix": suffix,
            "privacy": request.privacy,
        }

    assert top is not None and bottom is not None
    return {"pairId": request.pair_id, "completionItems": [item(top, bottom), item(bottom, top)]}


def edit_too_long(code_to_edit: str) -> bool:
    return estimate_tokens(code_to_edit) > MAX_EDIT_TOKENS


def create_edit_pair(*, request: EditPairRequest, rng: np.random.Generator | None = None) -> dict:
    """Serve one edit pair (chat models only); ``{"pairId", "responseItems": [top, bottom]}``."""
    state = serving_state()
    probs = _draw(state, chat_only=True, tags=request.model_tags)
    rng = rng if rng is not None else np.random.default_rng()
    prefix, suffix = trim_context(request.prefix, request.suffix)
    prompt = edit_prompt(
        prefix=prefix,
        suffix=suffix,
        code_to_edit=request.code_to_edit,
        user_input=request.user_input,
        language=request.language,
    )
    gen = Generation(
        max_tokens=settings.SERVING_MAX_OUTPUT_TOKENS,
        temperature=EDIT_TEMPERATURE,
        top_p=EDIT_TOP_P,
    )
    outcome = _serve(
        state, probs, rng, prompt_for=lambda _slot: (prompt, gen), pair_id=request.pair_id
    )
    shown: dict[str, tuple[str, str]] = {}
    if outcome.ok:
        for side in outcome.sides:
            assert side is not None and side.raw is not None
            shown[side.completion_id] = (prompt_text(prompt), clean_edit(side.raw))
    _log_calls(
        outcome,
        pair_id=request.pair_id,
        user_id=request.user_id,
        privacy=request.privacy,
        file_type=request.language,
        shown=shown,
    )
    if not outcome.ok:
        raise _failure(outcome)
    top, bottom = outcome.sides
    stamp = _timestamp()

    def item(side: Attempt, other: Attempt) -> dict:
        text = shown[side.completion_id][1]
        return {
            "responseId": side.completion_id,
            "userId": request.user_id,
            "timestamp": stamp,
            "prompt": prompt_text(prompt),
            "response": text,
            "model": side.slot.key,
            "language": request.language,
            "codeToEdit": request.code_to_edit,
            "userInput": request.user_input,
            "prefix": prefix,
            "suffix": suffix,
            "pairResponseId": other.completion_id,
            "pairIndex": side.position,
            "latency": round(side.latency_s, 4),
            "privacy": request.privacy,
        }

    assert top is not None and bottom is not None
    return {"pairId": request.pair_id, "responseItems": [item(top, bottom), item(bottom, top)]}


# --- Latency fit ------------------------------------------------------------------------


def fit_pair_distribution(*, now: datetime | None = None) -> PairDistribution:
    """Fit each served model's latency (log-normal, pooled prior) from recent successful
    completions served here, and store the fits with the pair table they give."""
    started = time.perf_counter()
    now = now or timezone.now()
    config = SamplingConfig.current()
    slots = [slot_for(p) for p in served_providers()]
    latencies = recent_latencies(
        model_ids=[s.model_id for s in slots],
        since=now - timedelta(days=config.window_days),
        per_model=config.max_samples_per_model,
    )
    prior = pooled_prior(latencies, weight=config.prior_weight)
    fits = [fit_lognormal(latencies[s.model_id], prior=prior) for s in slots]
    tau = sampling_tau(config)
    table = sampling_table([s.key for s in slots], fits, tau=tau, floor=config.floor)
    row = PairDistribution.objects.create(
        computed_at=now,
        window_days=config.window_days,
        samples=sum(f.n for f in fits),
        prior_mu=prior.mu,
        prior_sigma=prior.sigma,
        prior_weight=prior.weight,
        fits=[
            {"model_id": s.model_id, "key": s.key, "mu": f.mu, "sigma": f.sigma, "n": f.n}
            for s, f in zip(slots, fits, strict=True)
        ],
        tau_seconds=None if math.isinf(tau) else tau,
        floor=config.floor,
        pairs=table.pairs if table else [],
        median_wait_s=table.median_wait_s if table else None,
        uniform_median_wait_s=table.uniform_median_wait_s if table else None,
        mean_wait_s=table.mean_wait_s if table else None,
        uniform_mean_wait_s=table.uniform_mean_wait_s if table else None,
        duration_ms=(time.perf_counter() - started) * 1000.0,
    )
    stale = PairDistribution.objects.order_by("-id").values_list("id", flat=True)[KEEP_FITS:]
    PairDistribution.objects.filter(id__in=list(stale)).delete()
    clear_serving_state()
    return row
