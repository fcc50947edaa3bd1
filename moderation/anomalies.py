"""Anomaly rules over recent battles. Each rule returns findings; the task files them as reports.

Rules (thresholds are settings, see arena_site/settings.py `ANOMALY_*`):
- daily_cap: a user cast more than ANOMALY_DAILY_CAP votes on one UTC day.
- top_slot: a user picked the top completion in at least ANOMALY_TOP_SLOT_SHARE of at
  least ANOMALY_TOP_SLOT_MIN_VOTES completion votes (honest users pick it about 82% of
  the time, so this flags, it does not convict).
- outlier: the Chatbot Arena test (analysis/outliers.py): product of 1/(2p) over a user's
  votes above ANOMALY_OUTLIER_THRESHOLD with at least ANOMALY_OUTLIER_MIN_VOTES votes, on
  counts per (user, unordered pair, choice); "both bad" votes are not choices there.
- ip_burst: more than ANOMALY_IP_BURST_VOTES votes from one (pseudonymised) IP within one
  clock minute.
- inhuman_pace: a user with at least 10 votes whose median gap between votes is under
  ANOMALY_MIN_VOTE_GAP_SECONDS.
- implausible_latency: a user whose votes report completion latencies under
  ANOMALY_MIN_LATENCY_MS (no model answers that fast; the client is likely scripted).
- presence: a user with at least ANOMALY_RIGGING_MIN_VOTES votes, a large share of which
  involve one model, against the share of the other users' votes of the same days that
  involve it: z-score at least ANOMALY_PRESENCE_Z (a target-only rigger votes only where it
  sees its model).
- affinity: a user with at least ANOMALY_RIGGING_MIN_VOTES votes who picks one model more
  often than the other users do in the same pairs: z-score at least ANOMALY_AFFINITY_Z.
  Both scores are analysis/rigging_scores.py's, the ones the rigging simulation measures.
Only battles of the last ANOMALY_WINDOW_DAYS that are counted or held pending review are
examined (held ones too: a flagged user stays flagged while its votes are held, so the votes
it keeps sending are held as well); excluded battles are not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate, TruncMinute
from django.utils import timezone

from analysis.outliers import merge_counts, outlier_scores
from analysis.rigging_scores import UserScores, user_scores
from catalogue.models import ArenaModel
from ingest.models import Battle, BattleKind, Outcome


@dataclass(frozen=True)
class Finding:
    rule: str
    subject_kind: str
    subject: str
    battles: int
    detail: dict[str, Any] = field(default_factory=dict)


def recent_battles() -> QuerySet[Battle]:
    since = timezone.now() - timedelta(days=settings.ANOMALY_WINDOW_DAYS)
    return Battle.objects.filter(Q(excluded=False) | ~Q(hold=""), received_at__gte=since)


def recent_user_battles() -> QuerySet[Battle]:
    """The recent battles that have a user (the per-user rules' input): battles stored
    without a user are not one user's."""
    return recent_battles().exclude(user_hash="")


def daily_cap() -> list[Finding]:
    rows = (
        recent_user_battles()
        .annotate(day=TruncDate("received_at"))
        .values("user_hash", "day")
        .annotate(n=Count("id"))
        .filter(n__gt=settings.ANOMALY_DAILY_CAP)
    )
    worst: dict[str, tuple[int, str]] = {}
    for r in rows:
        if r["n"] > worst.get(r["user_hash"], (0, ""))[0]:
            worst[r["user_hash"]] = (r["n"], r["day"].isoformat())
    return [
        Finding(
            "daily_cap", "user", u, n, {"votes": n, "day": day, "cap": settings.ANOMALY_DAILY_CAP}
        )
        for u, (n, day) in worst.items()
    ]


def top_slot() -> list[Finding]:
    rows = (
        recent_user_battles()
        .filter(kind=BattleKind.COMPLETION)
        .values("user_hash")
        .annotate(n=Count("id"), top=Count("id", filter=Q(outcome=Outcome.A)))
        .filter(n__gte=settings.ANOMALY_TOP_SLOT_MIN_VOTES)
    )
    return [
        Finding(
            "top_slot",
            "user",
            r["user_hash"],
            r["n"],
            {"votes": r["n"], "top_share": round(r["top"] / r["n"], 4)},
        )
        for r in rows
        if r["top"] / r["n"] >= settings.ANOMALY_TOP_SLOT_SHARE
    ]


def outlier_counts() -> tuple[list[str], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The outlier test's input: the users, and counts per (user, unordered pair, choice).

    The database groups by the ordered pair (top, bottom); a winner shown on top and the
    same winner shown at the bottom are one choice, so those rows are merged
    (analysis.outliers.merge_counts) -- otherwise part of a user's own votes would count
    as "what others chose". "Both bad" expresses no preference between the two models and
    is left out: scored as a rare tie, one such vote flagged an honest user.
    """
    rows = list(
        recent_user_battles()
        .exclude(outcome=Outcome.BOTH_BAD)
        .values_list("user_hash", "model_a_id", "model_b_id", "outcome")
        .annotate(n=Count("id"))
    )
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return [], (empty, empty, empty, empty)
    users = sorted({r[0] for r in rows})
    uidx = {u: i for i, u in enumerate(users)}
    a = np.array([r[1] for r in rows])
    b = np.array([r[2] for r in rows])
    o = np.array([r[3] for r in rows])
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pair = lo * (int(hi.max()) + 1) + hi
    winner = np.where(o == Outcome.A, a, np.where(o == Outcome.B, b, -1))
    choice = np.where(winner == -1, 2, np.where(winner == lo, 0, 1))
    user = np.array([uidx[r[0]] for r in rows])
    return users, merge_counts(user, pair, choice, np.array([r[4] for r in rows]))


def outliers() -> list[Finding]:
    users, counts = outlier_counts()
    if not users:
        return []
    s = outlier_scores(*counts)
    flagged = s.flagged(
        min_votes=settings.ANOMALY_OUTLIER_MIN_VOTES, threshold=settings.ANOMALY_OUTLIER_THRESHOLD
    )
    return [
        Finding(
            "outlier",
            "user",
            users[int(s.user[i])],
            int(s.votes[i]),
            {
                "votes": int(s.votes[i]),
                "score": round(float(np.exp(min(s.log_score[i], 700))), 2),
                "log_score": round(float(s.log_score[i]), 2),
                "threshold": settings.ANOMALY_OUTLIER_THRESHOLD,
            },
        )
        for i in np.flatnonzero(flagged)
    ]


def ip_bursts() -> list[Finding]:
    rows = (
        recent_battles()
        .exclude(ip_hash="")
        .annotate(minute=TruncMinute("received_at"))
        .values("ip_hash", "minute")
        .annotate(n=Count("id"))
        .filter(n__gt=settings.ANOMALY_IP_BURST_VOTES)
        .order_by("ip_hash", "-n")
    )
    found: dict[str, Finding] = {}
    for r in rows:
        if r["ip_hash"] in found:
            continue
        start = r["minute"]
        found[r["ip_hash"]] = Finding(
            "ip_burst",
            "ip",
            r["ip_hash"],
            r["n"],
            {
                "votes": r["n"],
                "window": [start.isoformat(), (start + timedelta(minutes=1)).isoformat()],
                "limit_per_minute": settings.ANOMALY_IP_BURST_VOTES,
            },
        )
    return list(found.values())


def inhuman_pace(min_votes: int = 10) -> list[Finding]:
    busy = (
        recent_user_battles()
        .values("user_hash")
        .annotate(n=Count("id"))
        .filter(n__gte=min_votes)
        .values_list("user_hash", flat=True)
    )
    rows = recent_user_battles().filter(user_hash__in=busy).order_by("user_hash", "received_at")
    findings: list[Finding] = []
    current: str | None = None
    times: list[float] = []

    def close(user: str, stamps: list[float]) -> None:
        if len(stamps) >= min_votes:
            gap = float(np.median(np.diff(np.array(stamps))))
            if gap < settings.ANOMALY_MIN_VOTE_GAP_SECONDS:
                findings.append(
                    Finding(
                        "inhuman_pace",
                        "user",
                        user,
                        len(stamps),
                        {"votes": len(stamps), "median_gap_seconds": round(gap, 3)},
                    )
                )

    for user, at in rows.values_list("user_hash", "received_at").iterator(chunk_size=5000):
        if user != current:
            if current is not None:
                close(current, times)
            current, times = user, []
        times.append(at.timestamp())
    if current is not None:
        close(current, times)
    return findings


def implausible_latency() -> list[Finding]:
    limit = settings.ANOMALY_MIN_LATENCY_MS
    rows = (
        recent_user_battles()
        .filter(Q(latency_a_ms__lt=limit) | Q(latency_b_ms__lt=limit))
        .values("user_hash")
        .annotate(n=Count("id"))
    )
    return [
        Finding(
            "implausible_latency",
            "user",
            r["user_hash"],
            r["n"],
            {"votes": r["n"], "below_ms": limit},
        )
        for r in rows
    ]


Scored = tuple[list[str], list[str], UserScores]  # users, model keys, their scores


def rigging_scores() -> Scored:
    """Presence and affinity of every recent user: the users, the model keys (indexed as in
    the scores) and the scores, with each UTC day's votes of the other users as presence's
    reference (pairs are not served uniformly, and models come and go)."""
    rows = list(
        recent_user_battles()
        .annotate(day=TruncDate("received_at"))
        .values_list("user_hash", "model_a_id", "model_b_id", "outcome", "day")
        .annotate(n=Count("id"))
    )
    model_ids = sorted({r[1] for r in rows} | {r[2] for r in rows})
    keys = dict(ArenaModel.objects.filter(id__in=model_ids).values_list("id", "key"))
    midx = {m: i for i, m in enumerate(model_ids)}
    users = sorted({r[0] for r in rows})
    uidx = {u: i for i, u in enumerate(users)}
    scores = user_scores(
        np.array([uidx[r[0]] for r in rows], dtype=np.int64),
        np.array([midx[r[1]] for r in rows], dtype=np.int64),
        np.array([midx[r[2]] for r in rows], dtype=np.int64),
        np.array([r[3] for r in rows], dtype=np.int64),
        n_users=len(users),
        n_models=len(model_ids),
        count=np.array([r[5] for r in rows], dtype=float),
        period=np.array([r[4].toordinal() for r in rows], dtype=np.int64),
    )
    return users, [keys[m] for m in model_ids], scores


def _rigging_findings(rule: str, *, presence: bool, scored: Scored | None = None) -> list[Finding]:
    users, models, s = scored if scored is not None else rigging_scores()
    threshold = settings.ANOMALY_PRESENCE_Z if presence else settings.ANOMALY_AFFINITY_Z
    flags = s.flagged(z=threshold, min_votes=settings.ANOMALY_RIGGING_MIN_VOTES)
    z, model = (s.presence, s.presence_model) if presence else (s.affinity, s.affinity_model)
    findings = []
    for i in np.flatnonzero(flags[0] if presence else flags[1]):
        key, votes, score = models[int(model[i])], int(s.votes[i]), round(float(z[i]), 2)
        what = (
            f"votes involving {key} far more often than other users' votes of the same days"
            if presence
            else f"picks {key} far more often than other users in the same pairs"
        )
        findings.append(
            Finding(
                rule,
                "user",
                users[int(i)],
                votes,
                {
                    "votes": votes,
                    "model": key,
                    "z": score,
                    "threshold": threshold,
                    "reason": f"{what}: z = {score}, flagged from {threshold}",
                },
            )
        )
    return findings


def presence() -> list[Finding]:
    return _rigging_findings("presence", presence=True)


def affinity() -> list[Finding]:
    return _rigging_findings("affinity", presence=False)


def rigging() -> list[Finding]:
    """Presence and affinity from one read of the window's votes."""
    scored = rigging_scores()
    return _rigging_findings("presence", presence=True, scored=scored) + _rigging_findings(
        "affinity", presence=False, scored=scored
    )


RULES: tuple[Callable[[], list[Finding]], ...] = (
    daily_cap,
    top_slot,
    outliers,
    ip_bursts,
    inhuman_pace,
    implausible_latency,
    rigging,
)


def find_all() -> list[Finding]:
    return [finding for rule in RULES for finding in rule()]
