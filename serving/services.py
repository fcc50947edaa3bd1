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
   (``served_by_us=True``, ``succeeded``); code is stored only under Research privacy, by
   that function;
7. answer in the extension's shape.

Both run that flow in `_serve`; they differ in the models that qualify (edits: chat models
only), the prompts, the sampling settings, the clean-up and the names of the item fields.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np
from django.conf import settings

from analysis.fim import estimate_tokens, trim_context

from .engine import Attempt
from .prompts import clean_completion, clean_edit, completion_prompt, edit_prompt, prompt_text
from .providers import Generation, Prompt
from .selectors import serving_state
from .serve import draw, log_calls, pair_probability, serve, shown_sides

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


class ItemFields(TypedDict):
    """The fields of a shown side that both routes' items carry, as the extension names them."""

    userId: str
    timestamp: int
    prompt: str
    model: str
    pairIndex: int
    latency: float
    prefix: str
    suffix: str
    privacy: str


class CompletionItem(ItemFields):
    completionId: str
    pairCompletionId: str
    completion: str


class CompletionPair(TypedDict):
    """`/create_pair`'s answer."""

    pairId: str
    completionItems: list[CompletionItem]


class EditItem(ItemFields):
    responseId: str
    pairResponseId: str
    response: str
    language: str
    codeToEdit: str
    userInput: str


class EditPair(TypedDict):
    """`/create_edit_pair`'s answer."""

    pairId: str
    responseItems: list[EditItem]


@dataclass(frozen=True)
class _Side:
    """One shown side: the item fields both routes share, its id, its partner's, its text."""

    fields: ItemFields
    id: str
    partner_id: str
    text: str


def _serve(
    request: PairRequest | EditPairRequest,
    *,
    prefix: str,
    suffix: str,
    prompts: Mapping[bool, Prompt],
    gen: Generation,
    clean: Callable[[str, bool], str],
    chat_only: bool,
    file_type: str,
    rng: np.random.Generator | None,
) -> tuple[_Side, _Side]:
    """Steps 1 and 3-6 of the module docstring for a trimmed context; (top, bottom).

    ``prompts[is_chat]`` is what a provider of that kind is sent; ``clean(raw, is_chat)``
    turns its answer into the text shown."""
    state = serving_state()
    probs = draw(state, chat_only=chat_only, tags=request.model_tags)
    rng = rng if rng is not None else np.random.default_rng()
    outcome = serve(
        state,
        probs,
        rng,
        prompt_for=lambda slot: (prompts[slot.provider.is_chat], gen),
        pair_id=request.pair_id,
    )
    shown: dict[str, tuple[str, str]] = {}
    if outcome.ok:
        for side in outcome.sides:
            assert side is not None and side.raw is not None
            chat = side.slot.provider.is_chat
            shown[side.completion_id] = (prompt_text(prompts[chat]), clean(side.raw, chat))
    log_calls(
        outcome,
        pair_id=request.pair_id,
        user_id=request.user_id,
        privacy=request.privacy,
        file_type=file_type,
        shown=shown,
        probability=pair_probability(state, probs, outcome),
    )
    top, bottom = shown_sides(outcome)
    stamp = _timestamp()

    def shown_side(attempt: Attempt, partner: Attempt) -> _Side:
        prompt, text = shown[attempt.completion_id]
        fields: ItemFields = {
            "userId": request.user_id,
            "timestamp": stamp,
            "prompt": prompt,
            "model": attempt.slot.key,
            "pairIndex": attempt.position,
            "latency": round(attempt.latency_s, 4),
            "prefix": prefix,
            "suffix": suffix,
            "privacy": request.privacy,
        }
        return _Side(fields, attempt.completion_id, partner.completion_id, text)

    return shown_side(top, bottom), shown_side(bottom, top)


def create_pair(*, request: PairRequest, rng: np.random.Generator | None = None) -> CompletionPair:
    """Serve one completion pair; returns ``{"pairId", "completionItems": [top, bottom]}``."""
    prefix, suffix = trim_context(request.prefix, request.suffix)
    # Built here, not on the engine's loop thread: that thread does I/O for every request.
    prompts = {
        chat: completion_prompt(chat=chat, prefix=prefix, suffix=suffix) for chat in (True, False)
    }
    sides = _serve(
        request,
        prefix=prefix,
        suffix=suffix,
        prompts=prompts,
        gen=Generation(
            max_tokens=min(request.max_tokens, settings.SERVING_MAX_OUTPUT_TOKENS),
            temperature=request.temperature,
            top_p=request.top_p,
        ),
        clean=lambda raw, chat: clean_completion(
            raw, chat=chat, prefix=prefix, suffix=suffix, max_lines=request.max_lines
        ),
        chat_only=False,
        file_type="",
        rng=rng,
    )
    items: list[CompletionItem] = [
        {**s.fields, "completionId": s.id, "pairCompletionId": s.partner_id, "completion": s.text}
        for s in sides
    ]
    return {"pairId": request.pair_id, "completionItems": items}


def edit_too_long(code_to_edit: str) -> bool:
    return estimate_tokens(code_to_edit) > MAX_EDIT_TOKENS


def create_edit_pair(
    *, request: EditPairRequest, rng: np.random.Generator | None = None
) -> EditPair:
    """Serve one edit pair (chat models only); ``{"pairId", "responseItems": [top, bottom]}``."""
    prefix, suffix = trim_context(request.prefix, request.suffix)
    prompt = edit_prompt(
        prefix=prefix,
        suffix=suffix,
        code_to_edit=request.code_to_edit,
        user_input=request.user_input,
        language=request.language,
    )
    sides = _serve(
        request,
        prefix=prefix,
        suffix=suffix,
        prompts={True: prompt, False: prompt},
        gen=Generation(
            max_tokens=settings.SERVING_MAX_OUTPUT_TOKENS,
            temperature=EDIT_TEMPERATURE,
            top_p=EDIT_TOP_P,
        ),
        clean=lambda raw, _chat: clean_edit(raw),
        chat_only=True,
        file_type=request.language,
        rng=rng,
    )
    items: list[EditItem] = [
        {
            **s.fields,
            "responseId": s.id,
            "pairResponseId": s.partner_id,
            "response": s.text,
            "language": request.language,
            "codeToEdit": request.code_to_edit,
            "userInput": request.user_input,
        }
        for s in sides
    ]
    return {"pairId": request.pair_id, "responseItems": items}
