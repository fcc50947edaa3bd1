"""Pair serving for the extension: `create_pair` and `create_edit_pair`.

Each does, in order:

1. take the serving state (models with an enabled provider, their latency fits, the pair
   distribution under the current tau and floor; see ``selectors``);
2. trim the context (``analysis.fim.trim_context``: last 6,144 estimated tokens of the
   prefix, first 2,048 of the suffix);
3. draw a pair and its top/bottom order (``analysis.latency.sample_pair``);
4. ask both providers at once (``serve`` and ``engine``); a failed side is replaced by a
   substitute drawn from the same distribution given the other side's model, while the
   deadline allows;
5. clean up both answers (``prompts``);
6. log every call with its latency through ``ingest.completions.record_completions``
   (``served_by_us=True``, ``succeeded``) on a database thread, without waiting for it;
   code is stored only under Research privacy, by that function;
7. answer in the extension's shape.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings

from analysis.fim import estimate_tokens, trim_context

from .engine import Attempt, Slot
from .prompts import clean_completion, clean_edit, completion_prompt, edit_prompt, prompt_text
from .providers import Generation, Prompt
from .selectors import serving_state
from .serve import draw, pair_probability, serve, settle

# Edits: the original server's sampling settings (its constants TEMPERATURE and TOP_P).
EDIT_TEMPERATURE = 0.3
EDIT_TOP_P = 0.9
# Estimated tokens (4 bytes each) a selection to edit may have; it is sent whole.
MAX_EDIT_TOKENS = 8192


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


def _timestamp() -> int:
    # Seconds, as the original server sent (the extension stores it as an INTEGER).
    return int(time.time())


def create_pair(*, request: PairRequest, rng: np.random.Generator | None = None) -> dict:
    """Serve one completion pair; returns ``{"pairId", "completionItems": [top, bottom]}``."""
    state = serving_state()
    probs = draw(state, chat_only=False, tags=request.model_tags)
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

    outcome = serve(state, probs, rng, prompt_for=prompt_for, pair_id=request.pair_id)
    shown: dict[str, tuple[str, str]] = {}
    if outcome.ok:
        for side in outcome.sides:
            assert side is not None and side.raw is not None
            chat = side.slot.provider.is_chat
            text = clean_completion(
                side.raw, chat=chat, prefix=prefix, suffix=suffix, max_lines=request.max_lines
            )
            shown[side.completion_id] = (prompt_text(prompts[chat]), text)
    top, bottom = settle(
        outcome,
        pair_id=request.pair_id,
        user_id=request.user_id,
        privacy=request.privacy,
        file_type="",
        shown=shown,
        probability=pair_probability(state, probs, outcome),
    )
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

    return {"pairId": request.pair_id, "completionItems": [item(top, bottom), item(bottom, top)]}


def edit_too_long(code_to_edit: str) -> bool:
    return estimate_tokens(code_to_edit) > MAX_EDIT_TOKENS


def create_edit_pair(*, request: EditPairRequest, rng: np.random.Generator | None = None) -> dict:
    """Serve one edit pair (chat models only); ``{"pairId", "responseItems": [top, bottom]}``."""
    state = serving_state()
    probs = draw(state, chat_only=True, tags=request.model_tags)
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
    outcome = serve(
        state, probs, rng, prompt_for=lambda _slot: (prompt, gen), pair_id=request.pair_id
    )
    shown: dict[str, tuple[str, str]] = {}
    if outcome.ok:
        for side in outcome.sides:
            assert side is not None and side.raw is not None
            shown[side.completion_id] = (prompt_text(prompt), clean_edit(side.raw))
    top, bottom = settle(
        outcome,
        pair_id=request.pair_id,
        user_id=request.user_id,
        privacy=request.privacy,
        file_type=request.language,
        shown=shown,
        probability=pair_probability(state, probs, outcome),
    )
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

    return {"pairId": request.pair_id, "responseItems": [item(top, bottom), item(bottom, top)]}
