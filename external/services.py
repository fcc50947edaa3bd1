"""Writes of the external app: sources, aliases, score imports and correlations.

* ``import_scores`` stores parsed boards in one transaction (a broken file imports
  nothing), replaces an earlier import of the same (source, metric, release), resolves the
  names against the alias table and the catalogue, and returns what matched and what did not.
* ``resolve_scores`` keeps each score's ``model`` in step with the alias table and the
  catalogue: an alias wins; otherwise a name equal to a catalogue key (or to one of its
  ``ModelAlias`` keys) matches; an alias without a model means "deliberately unmatched".
  A model merged into another counts as that other model.
* ``compute_correlations`` correlates the arena's ratings (overall and each task-type
  slice of a snapshot) with every active board and stores the results for that snapshot.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from analysis.correlation import correlate
from catalogue.models import ArenaModel, ModelAlias
from catalogue.selectors import merge_targets
from leaderboard import selectors as lb_selectors
from leaderboard.models import Snapshot

from .importers import ParsedBoard, read_boards
from .models import (
    CorrelationResult,
    ExternalAlias,
    ExternalBoard,
    ExternalScore,
    ExternalSource,
    Match,
    SourceKind,
)
from .seed_aliases import SEED_ALIASES
from .sources import DEMO_IMPORTS, SOURCES

log = logging.getLogger(__name__)

CORRELATION_DIMENSION = "task_type"  # slices besides "overall" that get correlations
CACHE_PREFIX = "ext:corr"


# ----------------------------------------------------------------------------- sources


def ensure_source(*, key: str) -> ExternalSource:
    """The source row for ``key``, created from ``sources.SOURCES`` if missing."""
    info = SOURCES.get(key)
    defaults = (
        {"name": info.name, "kind": info.kind, "url": info.url, "description": info.description}
        if info
        else {"name": key, "kind": SourceKind.STATIC}
    )
    source, _ = ExternalSource.objects.get_or_create(key=key, defaults=defaults)
    return source


def board_label(*, source: ExternalSource, metric: str, release: str) -> str:
    info = SOURCES.get(source.key)
    metric_label = info.metrics.get(metric, metric) if info else metric
    return f"{source.name} {metric_label}" + (f" ({release})" if release else "")


# ----------------------------------------------------------------------------- aliases


def seed_external_aliases() -> int:
    """Add the demo catalogue's aliases (``seed_aliases``) that are missing. Never edits one.

    Entries whose catalogue model does not exist are skipped. Returns how many were added.
    """
    keys = dict(ArenaModel.objects.values_list("key", "id"))
    created = 0
    with transaction.atomic():
        for source_key, name, model_key, note, caveat in SEED_ALIASES:
            if model_key is not None and model_key not in keys:
                continue
            source = ensure_source(key=source_key)
            _, was_created = ExternalAlias.objects.get_or_create(
                source=source,
                name=name,
                defaults={
                    "model_id": keys.get(model_key) if model_key else None,
                    "note": note,
                    "caveat": caveat,
                },
            )
            created += was_created
        resolve_scores()
    return created


def resolve_scores(*, source_ids: Iterable[int] | None = None) -> int:
    """Re-derive every score's ``model`` from the aliases and the catalogue; returns changes."""
    aliases = {
        (s, n): (m, bool(m))
        for s, n, m in ExternalAlias.objects.values_list("source_id", "name", "model_id")
    }
    catalogue = dict(ArenaModel.objects.values_list("key", "id"))
    catalogue.update(dict(ModelAlias.objects.values_list("key", "model_id")))
    # A key merged into another model (moderation) counts as that model, as its votes do.
    merged = merge_targets()
    scores = ExternalScore.objects.select_related("board").only(
        "id", "name", "model_id", "match", "board__source_id"
    )
    if source_ids is not None:
        scores = scores.filter(board__source_id__in=list(source_ids))
    changed = []
    for score in scores.iterator(chunk_size=2000):
        alias = aliases.get((score.board.source_id, score.name))
        if alias is not None:
            model_id, matched = alias
            match = Match.ALIAS if matched else Match.IGNORED
        elif score.name in catalogue:
            model_id, match = catalogue[score.name], Match.KEY
        else:
            model_id, match = None, Match.NONE
        model_id = merged.get(model_id, model_id) if model_id is not None else None
        if score.model_id != model_id or score.match != match:
            score.model_id, score.match = model_id, match
            changed.append(score)
    ExternalScore.objects.bulk_update(changed, ["model", "match"], batch_size=2000)
    return len(changed)


# ----------------------------------------------------------------------------- imports


@dataclass
class BoardReport:
    label: str
    scores: int
    matched: dict[str, str] = field(default_factory=dict)  # source name -> model key
    unmatched: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # alias says: no model
    ambiguous: dict[str, list[str]] = field(default_factory=dict)  # model key -> names
    replaced: bool = False


@dataclass
class ImportReport:
    boards: list[BoardReport] = field(default_factory=list)


def _board_report(board: ExternalBoard, *, replaced: bool) -> BoardReport:
    report = BoardReport(label=board.label, scores=0, replaced=replaced)
    by_model: dict[str, list[str]] = {}
    for name, match, key in board.scores.order_by("name").values_list(
        "name", "match", "model__key"
    ):
        report.scores += 1
        if key:
            report.matched[name] = key
            by_model.setdefault(key, []).append(name)
        elif match == Match.IGNORED:
            report.ignored.append(name)
        else:
            report.unmatched.append(name)
    report.ambiguous = {k: v for k, v in by_model.items() if len(v) > 1}
    return report


def store_boards(parsed: Sequence[ParsedBoard]) -> ImportReport:
    """Write parsed boards in one transaction, replacing earlier imports of the same boards."""
    report = ImportReport()
    now = timezone.now()
    with transaction.atomic():
        sources = set()
        boards = []
        for item in parsed:
            source = ensure_source(key=item.source)
            sources.add(source.pk)
            board, created = ExternalBoard.objects.get_or_create(
                source=source,
                metric=item.metric,
                release=item.release,
                defaults={
                    "label": board_label(source=source, metric=item.metric, release=item.release),
                    "imported_at": now,
                },
            )
            # A re-import replaces the scores; the admin's `active` choice is kept.
            board.scores.all().delete()
            board.file_name = item.file_name[:300]
            board.file_sha256 = item.file_sha256
            board.details = item.details
            board.imported_at = now
            board.save()
            ExternalScore.objects.bulk_create(
                [
                    ExternalScore(
                        board=board, name=row.model_name, value=row.value, extra=row.extra
                    )
                    for row in item.rows
                ],
                batch_size=1000,
            )
            boards.append((board, not created))
        resolve_scores(source_ids=sources)
        report.boards = [_board_report(b, replaced=r) for b, r in boards]
        schedule_correlations()
    return report


def import_scores(
    *,
    fmt: str,
    paths: Sequence[str | Path],
    release: str | None = None,
    start: date | str | None = None,
    end: date | str | None = None,
) -> ImportReport:
    """Parse one import (raises BenchmarkFormatError / ValueError) and store it atomically."""
    return store_boards(read_boards(fmt, paths, release=release, start=start, end=end))


def import_demo_scores() -> ImportReport:
    """The demo's external files (``sources.DEMO_IMPORTS``), all in one transaction."""
    base = Path(settings.BASE_DIR)
    parsed: list[ParsedBoard] = []
    for item in DEMO_IMPORTS:
        parsed.extend(read_boards(item.format, [base / p for p in item.paths], **item.options))
    return store_boards(parsed)


# ------------------------------------------------------------------------ correlations


def _finite(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _board_scores(board: ExternalBoard) -> dict[str, tuple[float, str]]:
    """Catalogue key -> (score, source name); with two names for one model, the alias wins."""
    out: dict[str, tuple[float, str, int]] = {}
    rank: dict[str, int] = {Match.ALIAS: 0, Match.KEY: 1}
    for name, value, key, match in (
        board.scores.filter(model__isnull=False)
        .order_by("name")
        .values_list("name", "value", "model__key", "match")
    ):
        candidate = (value, name, rank.get(match, 2))
        if key not in out or candidate[2] < out[key][2]:
            out[key] = candidate
    return {k: (v[0], v[1]) for k, v in out.items()}


def compute_correlations(*, snapshot_id: int | None = None) -> int:
    """Store Spearman and Pearson (Fisher-z 95% intervals) for a snapshot.

    For the overall board and each task-type slice of the snapshot (default: the
    published one), against every active external board. Replaces earlier results for the
    snapshot. Returns the number of results stored (0 when there is no snapshot).
    """
    sid = snapshot_id or lb_selectors.published_snapshot_id()
    if sid is None:
        return 0
    resolve_scores()
    categories = [
        c["key"]
        for c in lb_selectors.categories(snapshot_id=sid)
        if c["key"] == "overall" or c["dimension"] == CORRELATION_DIMENSION
    ]
    boards = list(ExternalBoard.objects.filter(active=True).select_related("source"))
    scores = {b.pk: _board_scores(b) for b in boards}
    now = timezone.now()
    results = []
    with transaction.atomic():
        snapshot = Snapshot.objects.select_for_update().filter(pk=sid).first()
        if snapshot is None:  # thinned away meanwhile
            return 0
        for category in categories:
            data = lb_selectors.board(category=category, snapshot_id=sid)
            if data is None:
                continue
            rows = {m["model"]: m for m in data["models"] if m["rating"] is not None}
            arena = {k: m["rating"] for k, m in rows.items()}
            for board in boards:
                external = {k: v for k, (v, _) in scores[board.pk].items()}
                rho = correlate(arena, external, method="spearman")
                r = correlate(arena, external, method="pearson")
                points = [
                    {
                        "model": key,
                        "display_name": rows[key]["display_name"],
                        "rating": arena[key],
                        "score": external[key],
                        "name": scores[board.pk][key][1],
                    }
                    for key in rho.models
                ]
                results.append(
                    CorrelationResult(
                        snapshot_id=sid,
                        slice_key=category,
                        board=board,
                        n=rho.n,
                        spearman=_finite(rho.value),
                        spearman_lower=_finite(rho.ci_lower),
                        spearman_upper=_finite(rho.ci_upper),
                        spearman_p=_finite(rho.p_value),
                        pearson=_finite(r.value),
                        pearson_lower=_finite(r.ci_lower),
                        pearson_upper=_finite(r.ci_upper),
                        pearson_p=_finite(r.p_value),
                        points=points,
                        computed_at=now,
                    )
                )
        CorrelationResult.objects.filter(snapshot_id=sid).delete()
        CorrelationResult.objects.bulk_create(results, batch_size=500)
        transaction.on_commit(lambda: cache.delete(f"{CACHE_PREFIX}:{sid}"))
    log.info("Correlations for snapshot %s: %s result(s)", sid, len(results))
    return len(results)


def schedule_correlations(*, snapshot_id: int | None = None) -> None:
    """Recompute the correlations once the current transaction commits (a task, or inline).

    Never raises: a broker hiccup must not fail the recompute or the import that asked.
    """

    def enqueue() -> None:
        from .tasks import compute_correlations_task

        try:
            compute_correlations_task.delay(snapshot_id=snapshot_id)
        except Exception:
            log.exception("Could not queue the correlations task")

    transaction.on_commit(enqueue)
