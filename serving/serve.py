"""Serve one pair: draw two models, ask both providers at once, substitute a failed side, log every call.

Both `create_pair` and `create_edit_pair` (``services``) go through here; they differ only
in the prompt each side gets and how the answers are cleaned up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from analysis.latency import sample_pair
from core.metrics import PROVIDER_LATENCY
from ingest.completions import record_completions
from ingest.votes import CompletionIn

from .engine import Attempt, PairOutcome, PairTimeout, PickSubstitute, PromptFor, Slot, engine
from .errors import PairUnavailable, ProviderFailed, ProviderTimedOut, ServingError
from .selectors import ServingState

log = logging.getLogger(__name__)

# Failed sides replaced per pair at most; each substitute needs the deadline to allow it.
MAX_SUBSTITUTES = 2


def picker(state: ServingState, probs: np.ndarray, rng: np.random.Generator) -> PickSubstitute:
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


def serve(
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
            pick_substitute=picker(state, probs, rng),
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
        if attempt.ok:
            PROVIDER_LATENCY.labels(attempt.slot.key).observe(attempt.latency_s)
        elif attempt.error is not None:
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


def pair_probability(state: ServingState, probs: np.ndarray, outcome: PairOutcome) -> float | None:
    """The sampler's probability of the shown (unordered) pair, for inverse-propensity
    weights; None when no pair was shown. A pair completed by a substitute gets the
    probability of drawing it directly (its true propensity is slightly higher, by the
    share that came from failures: see docs/ratings.md, "Weights in the product")."""
    if not outcome.ok:
        return None
    index = {slot.model_id: i for i, slot in enumerate(state.slots)}
    i, j = sorted(index[side.slot.model_id] for side in outcome.sides if side is not None)
    return float(probs[i, j])  # the matrix holds the upper triangle (i < j)


def failure(outcome: PairOutcome) -> ServingError:
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


def log_calls(
    outcome: PairOutcome,
    *,
    pair_id: str,
    user_id: str,
    privacy: str,
    file_type: str,
    shown: dict[str, tuple[str, str]],
    probability: float | None = None,
) -> None:
    """One CompletionLog per provider call. ``shown`` maps the completion id of each shown
    side to (prompt, text); only those carry code, and only Research keeps it.
    ``probability``: the shown pair's (``pair_probability``), on every log of the pair."""
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
                pair_probability=probability,
                prompt=prompt,
                completion=text,
            )
        )
    record_completions(completions=rows)


def draw(state: ServingState, *, chat_only: bool, tags: frozenset[str]) -> np.ndarray:
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


def shown_sides(outcome: PairOutcome) -> tuple[Attempt, Attempt]:
    """The pair's (top, bottom) sides; raises its failure when it has none to show."""
    if not outcome.ok:
        raise failure(outcome)
    top, bottom = outcome.sides
    assert top is not None and bottom is not None
    return top, bottom
