"""Reads of contributors: personal leaderboards (the extension's panel and the personal page)
and the top-contributors board.

A personal leaderboard is fitted on the published overall board's grouped counts (the crowd,
kept on the snapshot) and the user's own counted votes, with `analysis.personal`; models
the board leaves out (too few votes, or no board yet) are fitted on the user's votes alone
and listed as provisional. It is cached
per (published snapshot, user, the user's vote count and last vote), so a panel refresh costs
one indexed query, and a new vote or a new board recomputes it. Only public models are listed;
private models still inform the fit.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Max

from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, GroupedCounts
from analysis.personal import CrowdBoard, UserVotes, as_payload, personal_history
from analysis.scale import CENTRE
from catalogue.models import ArenaModel, Visibility
from catalogue.selectors import merge_targets
from core import hotcache
from ingest.models import Battle, Outcome
from ingest.selectors import counted_votes
from leaderboard import selectors as lb_selectors

from .models import Contributor

_ENGINE = {
    Outcome.A: OUTCOME_A,
    Outcome.B: OUTCOME_B,
    Outcome.TIE: OUTCOME_TIE,
    Outcome.BOTH_BAD: OUTCOME_TIE,
}
TTL = 24 * 3600
# One model's line of a personal board: {"model", "elo", "votes"}.
Score = dict[str, Any]


def _crowd(sid: int | None, extra: tuple[str, ...]) -> CrowdBoard:
    """The published overall board's counts, widened by `extra` models it leaves out (below
    the vote minimum, or no board yet): the user's own votes alone inform those."""

    def load() -> CrowdBoard:
        counts = lb_selectors.overall_counts(snapshot_id=sid) if sid is not None else None
        if counts is None:
            none = np.zeros(0, dtype=np.int64)
            counts = GroupedCounts(models=(), a=none, b=none, outcome=none, count=none)
        models = counts.models + tuple(m for m in extra if m not in set(counts.models))
        return CrowdBoard(
            GroupedCounts(
                models=models, a=counts.a, b=counts.b, outcome=counts.outcome, count=counts.count
            )
        )

    digest = hashlib.sha256("\n".join(extra).encode()).hexdigest()[:16]
    value = hotcache.get(f"personal:crowd:{sid}:{digest}", load)
    return value if isinstance(value, CrowdBoard) else load()


def _board_keys(sid: int | None) -> set[str]:
    board = lb_selectors.board(category="overall", snapshot_id=sid) if sid is not None else None
    return {m["model"] for m in board["models"]} if board else set()


def _user_rows(user_hash: str) -> list[tuple[str, str, int]]:
    """The user's counted votes as (top key, bottom key, engine outcome), oldest first;
    merged keys count for their target, hidden models drop out."""
    target = merge_targets()
    catalogue = {
        pk: (key, visibility)
        for pk, key, visibility in ArenaModel.objects.values_list("id", "key", "visibility")
    }
    out = []
    rows = (
        counted_votes(user_hash=user_hash)
        .order_by("received_at", "id")
        .values_list("model_a_id", "model_b_id", "outcome")
    )
    for ma, mb, o in rows.iterator(chunk_size=2000):
        (ka, va), (kb, vb) = catalogue[target.get(ma, ma)], catalogue[target.get(mb, mb)]
        if ka != kb and Visibility.HIDDEN not in (va, vb):
            out.append((ka, kb, _ENGINE[Outcome(o)]))
    return out


def _shown(
    payload: list[list[dict[str, object]]], public: set[str], on_board: set[str]
) -> list[list[Score]]:
    """Only public models, re-centred so the listed ones average 1000 again; those not on the
    published board (too few votes there) marked provisional."""
    out = []
    for scores in payload:
        kept: list[Score] = [dict(s) for s in scores if s["model"] in public]
        if kept:
            shift = CENTRE - sum(float(s["elo"]) for s in kept) / len(kept)
            for s in kept:
                s["elo"] = round(float(s["elo"]) + shift, 2)
                if s["model"] not in on_board:
                    s["provisional"] = True
        out.append(kept)
    return out


def personal_scores(*, user_hash: str) -> list[list[Score]]:
    """What `POST /user_scores` answers: score lists oldest first; [] when there is nothing yet.

    The user's votes on models the published board leaves out (below its vote minimum, or
    before the first board) count too: those models are listed, marked provisional.
    """
    sid = lb_selectors.published_snapshot_id()
    mine = counted_votes(user_hash=user_hash).aggregate(n=Count("id"), last=Max("id"))
    if mine["n"] < settings.PERSONAL_MIN_VOTES:
        return []
    key = f"personal:scores:{sid}:{user_hash}:{mine['n']}:{mine['last']}"
    cached: list[list[Score]] | None = cache.get(key)
    if cached is not None:
        return cached
    rows = _user_rows(user_hash)
    crowd = _crowd(sid, tuple(sorted({k for a, b, _ in rows for k in (a, b)})))
    a, b, outcome = [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
    history = personal_history(
        crowd,
        UserVotes.from_keys(a, b, outcome, models=crowd.models),
        min_votes=settings.PERSONAL_MIN_VOTES,
        interval=settings.PERSONAL_HISTORY_INTERVAL,
    )
    public = set(
        ArenaModel.objects.filter(visibility=Visibility.PUBLIC).values_list("key", flat=True)
    )
    payload = _shown(as_payload(history), public, _board_keys(sid))
    cache.set(key, payload, TTL)
    return payload


def contributor_by_username(*, username: str) -> Contributor | None:
    """The account of this username, whatever its case (None for an empty one)."""
    if not username:
        return None
    return Contributor.objects.filter(username__iexact=username).first()


def contributor_by_token(*, token: str) -> Contributor | None:
    return Contributor.objects.filter(page_token=token).first()


def personal_page(*, contributor: Contributor) -> dict[str, Any]:
    history = personal_scores(user_hash=contributor.user_hash)
    votes = counted_votes(user_hash=contributor.user_hash).count()
    step = settings.PERSONAL_HISTORY_INTERVAL
    ends = [e for e in range(step, votes + 1, step) if e >= settings.PERSONAL_MIN_VOTES]
    if ends:
        ends[-1] = votes
    return {
        "contributor": contributor,
        "votes": votes,
        "checkpoints": ends,
        "history": history,
        "current": history[-1] if history else [],
        "min_votes": settings.PERSONAL_MIN_VOTES,
    }


def top_contributors(*, limit: int = 100) -> dict[str, Any]:
    """Registered users by counted votes; everyone else is counted, never listed."""
    sid = lb_selectors.published_snapshot_id()
    accounts = Contributor.objects.aggregate(n=Count("id"), last=Max("updated_at"))
    last = accounts["last"].timestamp() if accounts["last"] else 0
    key = f"contributors:top:{sid}:{limit}:{accounts['n']}:{last}"
    cached: dict[str, Any] | None = cache.get(key)
    if cached is not None:
        return cached
    names = dict(Contributor.objects.values_list("user_hash", "username"))
    counts = (
        Battle.objects.filter(user_hash__in=list(names), kind="completion", excluded=False)
        .values("user_hash")
        .annotate(n=Count("id"))
        .order_by("-n")
    )
    rows = [{"username": names[c["user_hash"]], "votes": c["n"]} for c in counts[:limit]]
    board = lb_selectors.board(category="overall", snapshot_id=sid) if sid else None
    data = {
        "rows": rows,
        "registered": len(names),
        "contributors": board["snapshot"]["users"] if board else 0,
    }
    cache.set(key, data, TTL)
    return data
