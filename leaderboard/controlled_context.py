"""Context-length interactions of the controlled board, kept only if they predict better.

Whether the top-slot advantage and the length preference change with how much code the
developer had around the cursor (a long file may make a longer completion more welcome). The
interaction covariates are the base covariate times the battle's log context length
(`Battle.context_tokens`, the ingest estimate), centred on the median, so the base
coefficient stays the effect at a typical context; an unknown context gets 0 (the median:
no interaction), as unknown lengths do. They enter the fit only if the held-out
log-likelihood per battle (`analysis.contextual_selection.select_features`, 3 folds, the
same split for both candidates) is higher with them than without; the board stores both
scores, so the page can say what was decided and why.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.core.cache import cache

from analysis.contextual_data import ContextCounts
from analysis.contextual_selection import select_features

INTERACTING = ("top", "length")  # the base covariates that get a context interaction
FOLDS = 3


@dataclass(frozen=True)
class ContextChoice:
    features: tuple[str, ...]  # what the fit uses
    known: int  # battles with a known context length
    score_without: float | None  # held-out log-likelihood per battle (None: not compared)
    score_with: float | None

    @property
    def kept(self) -> bool:
        return any(f.endswith("_ctx") for f in self.features)

    def to_json(self) -> dict[str, object]:
        return {
            "known": self.known,
            "kept": self.kept,
            "score_without": self.score_without,
            "score_with": self.score_with,
        }


def interaction_columns(
    columns: dict[str, np.ndarray], features: list[str], tokens: np.ndarray
) -> tuple[list[str], int]:
    """Add `<base>_ctx` columns to `columns` for the bases in `features`; their names and how
    many battles had a context length."""
    known = np.isfinite(tokens) & (tokens > 0)
    ctx = np.zeros(len(tokens))
    if known.any():
        logs = np.log1p(tokens[known])
        ctx[known] = logs - np.median(logs)
    names = []
    for base in INTERACTING:
        if base in features:
            columns[f"{base}_ctx"] = columns[base] * ctx
            names.append(f"{base}_ctx")
    return names, int(known.sum())


def choose(
    cc: ContextCounts,
    base: list[str],
    extra: list[str],
    *,
    known: int,
    min_known: int,
    reuse_key: str = "",
) -> ContextChoice:
    """The base features, plus the interactions if they raise the held-out likelihood.

    The comparison refits the model six times (seconds at the battles it reads), while
    the answer changes slowly: a decision for the same models and settings (`reuse_key`) is
    reused for `ARENA_CONTROLLED_CONTEXT_RESELECT_SECONDS` (a day by default)."""
    if not extra or known < min_known:
        return ContextChoice(tuple(base), known, None, None)
    key = f"lb:controlled-context:{reuse_key}:{','.join(base + extra)}"
    ttl = int(settings.ARENA_CONTROLLED_CONTEXT_RESELECT_SECONDS)
    if reuse_key and ttl > 0:
        with contextlib.suppress(Exception):  # the cache away: decide afresh
            kept = cache.get(key)
            if isinstance(kept, ContextChoice):
                return ContextChoice(kept.features, known, kept.score_without, kept.score_with)
    best, scores = select_features(cc, [base, base + extra], folds=FOLDS, seed=0)
    choice = ContextChoice(tuple(best), known, scores[tuple(base)], scores[tuple(base + extra)])
    if reuse_key and ttl > 0:
        with contextlib.suppress(Exception):
            cache.set(key, choice, ttl)
    return choice
