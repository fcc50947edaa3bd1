"""The "ignored counts as both bad" variant of the overall board (`/?view=ignored`, the API's
`?view=ignored`).

The plain board discards the pairs developers were shown and ignored. This variant adds
every ignored pair (leaderboard.ignored_pairs: both `/add_completion` logs, no vote within
`ARENA_IGNORED_WINDOW_MINUTES`, as of the snapshot's publication) to the overall board's
counts as a tie -- the extension's "both bad" -- with `analysis.ignored.add_ignored_as_ties`,
and fits them with the snapshot's anchor and shown models. It answers another question than
the plain board ("which model's completions get taken at all"), so it is always labelled.

Computed on first request per snapshot from what the snapshot stored (its overall counts)
and cached like the rest of the board; closed-form independent-vote intervals (one fit, no
bootstrap), which the page says. Counts of ignored pairs between models that are not on the
overall board, or between two keys of one model, are left out.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence

import numpy as np
from django.conf import settings
from django.core.cache import cache

from analysis.ignored import add_ignored_as_ties
from catalogue.models import ArenaModel

from . import selectors
from .aggregation import on_board
from .controlled import variant_rows
from .fitting import FitSettings, fit_board
from .ignored_pairs import pair_counts
from .models import Snapshot
from .recompute import _num, public_models, public_ranks


@dataclasses.dataclass(frozen=True)
class IgnoredBoard:
    """Per model key: (rating, lower, upper, rank or None); and what went in."""

    rows: dict[str, tuple[float | None, float | None, float | None, int | None]]
    ignored: int  # ignored pairs added as ties
    window_minutes: int
    scale_label: str


def _compute(sid: int) -> IgnoredBoard | None:
    counts = selectors.overall_counts(snapshot_id=sid)
    snap = Snapshot.objects.filter(pk=sid).first()
    published = selectors.snapshot_published_at(snapshot_id=sid)
    if counts is None or snap is None or published is None or not counts.total:
        return None
    minutes = int(settings.ARENA_IGNORED_WINDOW_MINUTES)
    raw = pair_counts(until=published, window=dt.timedelta(minutes=minutes))
    keys = dict(ArenaModel.objects.values_list("id", "key"))
    cols = list(zip(*raw, strict=True)) if raw else [()] * 4
    ia, ib, keep = on_board(counts, keys, cols[0], cols[1])
    ignored = np.asarray(cols[3], dtype=np.int64)
    keep &= ignored > 0
    with_ties = add_ignored_as_ties(counts, a=ia[keep], b=ib[keep], ignored=ignored[keep])
    shown_keys = tuple(sorted(set(public_models().values()) & set(counts.models)))
    board = fit_board(
        with_ties,
        settings=FitSettings(
            anchor=snap.anchor or None,
            anchor_value=snap.anchor_value,
            method="sandwich",
            seed=int(snap.seed),
            shown=shown_keys,
        ),
        rounds=0,
    )
    shown = np.array([k in shown_keys for k in board.models], dtype=bool)
    ranks = public_ranks(board.ci_lower, board.ci_upper, shown)
    return IgnoredBoard(
        rows={
            key: (
                _num(board.rating[i]),
                _num(board.ci_lower[i]),
                _num(board.ci_upper[i]),
                int(ranks[i]) or None,
            )
            for i, key in enumerate(board.models)
        },
        ignored=int(ignored[keep].sum()),
        window_minutes=minutes,
        scale_label=board.scale_label,
    )


def ignored_board(*, snapshot_id: int | None = None) -> IgnoredBoard | None:
    """The variant for the (published) snapshot; None while there is nothing to fit."""
    sid = snapshot_id or selectors.published_snapshot_id()
    if sid is None:
        return None
    key = f"lb:ignored-board:{sid}:{int(settings.ARENA_IGNORED_WINDOW_MINUTES)}"
    value = cache.get(key)
    if not isinstance(value, IgnoredBoard):
        value = _compute(sid)
        if value is None:
            return None
        cache.set(key, value, selectors.BOARD_TTL)
    return value


def ignored_rows(
    rows: Sequence[Mapping[str, object]], variant: IgnoredBoard
) -> list[dict[str, object]]:
    """Board rows of the ignored view (controlled.variant_rows with the variant's values)."""
    return variant_rows(rows, lambda r: variant.rows.get(str(r["model"]), (None, None, None, None)))
