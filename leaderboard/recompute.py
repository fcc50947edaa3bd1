"""The recompute: aggregate battles in SQL, fit every slice, publish one snapshot atomically.

A snapshot is written in a single transaction, so readers see either the previous
published board or the complete new one, never a mix. A failure leaves the previous one
published and is recorded as a failed snapshot with its error (shown in the admin).

Each run first writes its snapshot row as `running`; publishing fills that row in and
marks it published in the same transaction as its slices. A run that dies on the way
(`kill -9` of the worker) leaves its row `running`; the next task run, which holds the
recompute lease and so knows nobody else is running, marks such rows failed
(`mark_dead_runs`, from `leaderboard.tasks`), as does the admin when no lease is held.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from analysis.contextual import ContextualFit
from analysis.grouping import GroupedCounts
from analysis.leaderboard import Leaderboard
from analysis.ranks import intervals_apart, rank_ub
from catalogue.models import ArenaModel, Visibility
from core.metrics import RECOMPUTE_SECONDS
from ingest.selectors import held_battles

from . import fanout
from .aggregation import DIMENSIONS, BattleCells, aggregate
from .controlled import ControlledBoard, controlled_board
from .fanout import SliceJob
from .fitting import FitSettings, fit_board
from .influence import Influence
from .latency import Latency, served_latency
from .models import RatingConfig, Snapshot, SnapshotRow, SnapshotSlice
from .selectors import GROUPED_FIELDS, snapshot_published
from .signals import snapshot_ready
from .weighting import WeightedCounts, overall_counts

log = logging.getLogger(__name__)
OVERALL = "overall"
# Top places of the overall board that get "holds unless N votes are removed" (a few dozen
# warm-started refits each; slices get none, to keep the run cheap).
ROBUSTNESS_PLACES = 3


@dataclass(frozen=True)
class SliceResult:
    key: str
    dimension: str
    value: str
    board: Leaderboard
    adjusted: Leaderboard | None = None
    counts: GroupedCounts | None = None  # kept for the overall board only
    controlled: ControlledBoard | None = None  # overall board only (leaderboard.controlled)
    fitted_by: str = "recompute"  # or the worker that fitted it (leaderboard/fanout.py)
    weights_label: str = ""  # overall board only: the weights its fit used (weighting.py)


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def _matrix(m: np.ndarray) -> list[list[float | None]]:
    return [
        [None if not math.isfinite(v) else round(float(v), 5) for v in row]
        for row in np.asarray(m, dtype=float)
    ]


def _counts_json(counts: GroupedCounts) -> dict[str, list[str] | list[int]]:
    return {
        "models": list(counts.models),
        **{f: np.asarray(getattr(counts, f)).tolist() for f in GROUPED_FIELDS},
    }


def public_ranks(lower: np.ndarray, upper: np.ndarray, shown: np.ndarray) -> np.ndarray:
    """Rank (UB) among the shown models only; 0 for the others."""
    ranks = np.zeros(len(lower), dtype=np.int64)
    ranks[shown] = rank_ub(lower[shown], upper[shown])
    return ranks


def public_models() -> dict[int, str]:
    """The models the board shows (id -> key): only they hold the scale and get ranks."""
    return dict(ArenaModel.objects.filter(visibility=Visibility.PUBLIC).values_list("id", "key"))


# Wraps the list of slices to fit (for a progress bar).
Progress = Callable[[list[SliceJob]], Iterable[SliceJob]]


def _slice_jobs(
    cells: BattleCells, config: RatingConfig, keys: dict[int, str]
) -> tuple[list[tuple[str, str, str]], list[SliceJob]]:
    """(key, dimension, value) of every slice with enough battles, and its fitting job."""
    jobs: list[tuple[str, str, str]] = []
    slice_jobs: list[SliceJob] = []
    for dim in DIMENSIONS:
        for value in cells.values(dim):
            mask = cells.mask(dim, value)
            if int(cells.count[mask].sum()) >= config.slice_min_battles:
                key = f"{dim}:{value}"
                jobs.append((key, dim, str(value)))
                counts = cells.grouped(mask, keys, min_votes=config.min_model_votes)
                slice_jobs.append(SliceJob(key, counts, config.slice_rounds))
    return jobs, slice_jobs


def _fit_overall(
    cells: BattleCells,
    config: RatingConfig,
    keys: dict[int, str],
    fit_settings: FitSettings,
    shown_keys: list[str],
    *,
    refit: bool,
) -> SliceResult:
    overall = cells.grouped(None, keys, min_votes=config.min_model_votes)
    adjusted = (
        fit_board(overall, settings=fit_settings, rounds=config.rounds, position_bias=True)
        if overall.total
        else None
    )
    clustered = config.intervals == RatingConfig.Intervals.CLUSTERED and overall.total
    # Many users: grouped already where they are read (fewer rows from PostgreSQL).
    many = cells.users > settings.ARENA_MAX_USER_CLUSTERS
    groups = settings.ARENA_MAX_USER_CLUSTERS if many else None
    rated = (
        overall_counts(
            overall,
            keys,
            weights=config.weights,
            clustered=bool(clustered),
            user_groups=groups,
            influence=Influence.of(config),
        )
        if overall.total
        else WeightedCounts(overall, "none")
    )
    board = fit_board(
        rated.counts,
        settings=fit_settings,
        rounds=config.rounds,
        robustness_places=ROBUSTNESS_PLACES,
        users=cells.users if many and clustered else None,
    )
    controlled = _controlled(overall, keys, config, shown_keys, bool(clustered), refit=refit)
    return SliceResult(
        OVERALL,
        OVERALL,
        "",
        board,
        adjusted=adjusted,
        counts=overall,
        controlled=controlled,
        weights_label=rated.label,
    )


def fit_slices(
    cells: BattleCells,
    config: RatingConfig,
    keys: dict[int, str],
    progress: Progress = lambda jobs: jobs,
    *,
    shown: Collection[str] | None = None,
    refit: bool = True,
) -> list[SliceResult]:
    """Fit the overall board and every slice with enough battles. `progress` wraps the list
    of slices to fit (for a progress bar). `refit`: fit the controlled board afresh rather
    than reuse a recent fit (leaderboard/controlled.py). `shown`: keys of the models the board shows
    (default: the public ones); the mean of those in each slice's core holds its scale, so
    a model the board does not show cannot move the others."""
    anchor = config.anchor.key if config.anchor is not None else None
    shown_keys = sorted(public_models().values() if shown is None else shown)
    fit_settings = FitSettings(
        anchor=anchor,
        anchor_value=config.anchor_value,
        method=config.method,
        seed=int(config.seed),
        shown=tuple(shown_keys),
        max_clusters=settings.ARENA_MAX_USER_CLUSTERS,
    )
    jobs, slice_jobs = _slice_jobs(cells, config, keys)
    results: list[SliceResult] = []

    def fit_overall() -> None:
        results.append(_fit_overall(cells, config, keys, fit_settings, shown_keys, refit=refit))

    if fanout.enabled():
        boards, fitted_by = fanout.fit_shared(
            slice_jobs, fit_settings=fit_settings, meanwhile=fit_overall
        )
        helpers = sum(1 for who in fitted_by.values() if who != "recompute")
        log.info("%d slices fitted, %d of them by other workers", len(slice_jobs), helpers)
    else:
        fit_overall()
        boards, fitted_by = {}, {}
        for job in progress(slice_jobs):
            boards[job.key] = fit_board(job.counts, settings=fit_settings, rounds=job.rounds)
    for key, dim, value in jobs:
        results.append(
            SliceResult(key, dim, value, boards[key], fitted_by=fitted_by.get(key, "recompute"))
        )
    return results


def _controlled(
    overall: GroupedCounts,
    keys: dict[int, str],
    config: RatingConfig,
    shown: list[str],
    clustered: bool,
    refit: bool,
) -> ControlledBoard | None:
    """The controlled board, or None. An extra beside the plain board: a failure of its fit
    is logged and the plain board is still published (without the controlled view)."""
    try:
        return controlled_board(
            refit=refit,
            overall=overall,
            keys=keys,
            anchor=config.anchor.key if config.anchor is not None else None,
            anchor_value=config.anchor_value,
            shown=shown,
            clustered=clustered,
        )
    except Exception:
        log.exception("Controlled board failed; publishing the board without it")
        return None


def _rows_for(
    result: SliceResult,
    ids: dict[str, int],
    public_ids: set[int],
    overall: dict[int, SnapshotRow],
    latency: dict[int, Latency],
) -> list[SnapshotRow]:
    board = result.board
    model_ids = np.array([ids[m] for m in board.models], dtype=np.int64)
    votes = np.asarray(board.votes)
    ok = np.array([s == "ok" for s in board.status], dtype=bool)
    is_public = np.array([m in public_ids for m in model_ids.tolist()], dtype=bool)
    shown = is_public & ok
    ranks = public_ranks(np.asarray(board.ci_lower), np.asarray(board.ci_upper), shown)
    adjusted = result.adjusted
    controlled = result.controlled.fit if result.controlled is not None else None
    controlled_rank = np.zeros(len(model_ids), dtype=np.int64)
    if controlled is not None:
        # The controlled fit covers the same models (overall.models); ranked among the shown
        # models whose controlled interval is finite, as the plain board.
        order = np.array([controlled.models.index(m) for m in board.models], dtype=np.int64)
        lo, hi = controlled.lower[order], controlled.upper[order]
        controlled_rank = public_ranks(lo, hi, shown & np.isfinite(lo) & np.isfinite(hi))
    rows: list[SnapshotRow] = []
    for i, model_id in enumerate(model_ids.tolist()):
        rank = int(ranks[i]) if shown[i] else None
        base_row = overall.get(model_id) if result.key != OVERALL else None
        base = base_row.rank if base_row is not None else None
        change = base - rank if rank is not None and base is not None else None
        row = SnapshotRow(
            model_id=model_id,
            public=bool(shown[i]),
            rating=_num(board.rating[i]),
            ci_lower=_num(board.ci_lower[i]),
            ci_upper=_num(board.ci_upper[i]),
            median=_num(board.median[i]),
            rank=rank,
            rank_change=change,
            rank_change_clear=None
            if change is None or base_row is None
            else intervals_apart(
                (_num(board.ci_lower[i]), _num(board.ci_upper[i])),
                (base_row.ci_lower, base_row.ci_upper),
            ),
            votes=int(votes[i]),
            avg_win_rate=_num(board.avg_win_rate[i]),
            status=board.status[i],
        )
        _add_variants(
            row,
            board.models[i],
            served=latency.get(model_id),
            adjusted=adjusted,
            controlled=controlled,
            controlled_rank=int(controlled_rank[i]),
        )
        rows.append(row)
    return rows


def _robustness_json(board: Leaderboard, config: RatingConfig) -> list[dict[str, object]]:
    """The places' robustness; #1's entry also says how many added wins would put a rival
    above it and, when every vote weighs the same before the per-user bound, how many
    accounts at that bound those wins take."""
    entries = [r.to_dict() for r in board.robustness]
    cost = board.overtake
    if entries and cost is not None and cost.votes is not None:
        unweighted = config.weights == RatingConfig.Weights.NONE
        entries[0] |= {
            "added_votes": cost.votes,
            "added_by": cost.challenger,
            "added_accounts": cost.accounts(config.user_cap_total) if unweighted else None,
        }
    return entries


def _add_variants(
    row: SnapshotRow,
    model: str,
    *,
    served: Latency | None,
    adjusted: Leaderboard | None,
    controlled: ContextualFit | None,
    controlled_rank: int,
) -> None:
    """The row's served latency and its position-adjusted and controlled lines, where known."""
    if served is not None:
        row.latency_p50_ms = served.p50_ms
        row.latency_p90_ms = served.p90_ms
        row.latency_samples = served.samples
    if adjusted is not None:
        j = adjusted.models.index(model)
        row.adjusted_rating = _num(adjusted.rating[j])
        row.adjusted_ci_lower = _num(adjusted.ci_lower[j])
        row.adjusted_ci_upper = _num(adjusted.ci_upper[j])
    if controlled is not None:
        c = controlled.models.index(model)
        row.controlled_rating = _num(controlled.rating[c])
        row.controlled_ci_lower = _num(controlled.lower[c])
        row.controlled_ci_upper = _num(controlled.upper[c])
        row.controlled_rank = controlled_rank or None


def _intervals_label(results: list[SliceResult], cells: BattleCells) -> str:
    overall = next((r.board for r in results if r.key == OVERALL), None)
    if overall is None or not overall.clustered:
        return "independent votes"
    label = f"clustered by {cells.users:,} users"
    if cells.userless:
        label += f", with {cells.userless:,} battles without a user as independent votes"
    if overall.clusters < cells.users + cells.userless:
        label += f" (resampled in {overall.clusters:,} fixed groups)"
    return label


DIED = "The run stopped without finishing (its worker died or lost its lease)."


def start_run(*, trigger: str) -> Snapshot:
    """The row a run writes before it reads anything: `running` until it publishes or fails."""
    return Snapshot.objects.create(
        status=Snapshot.Status.RUNNING, computed_at=timezone.now(), trigger=trigger, method=""
    )


def mark_dead_runs(*, except_id: int | None = None) -> int:
    """Mark `running` rows failed; only for callers that know no run is alive (lease free/held)."""
    rows = Snapshot.objects.filter(status=Snapshot.Status.RUNNING)
    if except_id is not None:
        rows = rows.exclude(pk=except_id)
    return rows.update(status=Snapshot.Status.FAILED, error=DIED)


def _snapshot_fields(
    results: list[SliceResult],
    cells: BattleCells,
    config: RatingConfig,
    trigger: str,
    timings: dict[str, float],
) -> dict[str, object]:
    return {
        "status": Snapshot.Status.PUBLISHED,
        "computed_at": timezone.now(),
        "trigger": trigger,
        "method": config.method,
        "intervals": _intervals_label(results, cells),
        "weights": config.weights,
        "weights_label": next((r.weights_label for r in results if r.key == OVERALL), "")[:200],
        "rounds": config.rounds if config.method == "bootstrap" else 0,
        "seed": config.seed,
        "anchor": config.anchor.key if config.anchor is not None else "",
        "anchor_value": config.anchor_value,
        "battles": cells.battles,
        "users": cells.users,
        "simulated_battles": cells.simulated,
        "userless_battles": cells.userless,
        "held_battles": held_battles(),
        "aggregate_seconds": timings["aggregate"],
        "fit_seconds": timings["fit"],
        "duration_seconds": time.perf_counter() - timings["started"],
    }


def _create_slice(snapshot: Snapshot, result: SliceResult, config: RatingConfig) -> SnapshotSlice:
    board = result.board
    top = board.top_slot or (result.adjusted.top_slot if result.adjusted else None)
    return SnapshotSlice.objects.create(
        snapshot=snapshot,
        key=result.key,
        dimension=result.dimension,
        value=result.value,
        battles=int(board.total_battles),
        models_order=list(board.models),
        matrices={
            "win_fraction": _matrix(board.win_fraction),
            "battle_count": _matrix(board.battle_count),
            "predicted_win_rate": _matrix(board.predicted_win_rate),
        },
        counts=_counts_json(result.counts) if result.counts is not None else None,
        top_slot_p=_num(top.p) if top else None,
        top_slot_lower=_num(top.lower) if top else None,
        top_slot_upper=_num(top.upper) if top else None,
        scale_label=board.scale_label[:300],
        anchor_applied=bool(board.anchor_applied),
        robustness=_robustness_json(board, config),
        controlled=result.controlled.to_json() if result.controlled else None,
    )


def publish(
    *,
    results: list[SliceResult],
    cells: BattleCells,
    config: RatingConfig,
    trigger: str,
    timings: dict[str, float],
    snapshot: Snapshot | None = None,
    public_ids: Collection[int] | None = None,
) -> Snapshot:
    """Write the run's snapshot, slices and rows in one transaction. `public_ids`: the
    models shown (as passed to `fit_slices`; default: the public ones now)."""
    ids = dict(ArenaModel.objects.values_list("key", "id"))
    public_ids = set(public_models() if public_ids is None else public_ids)
    latency = served_latency()  # read before the transaction: it writes nothing
    with transaction.atomic():
        fields = _snapshot_fields(results, cells, config, trigger, timings)
        if snapshot is None:
            snapshot = Snapshot.objects.create(**fields)
        else:
            for name, value in fields.items():
                setattr(snapshot, name, value)
            snapshot.save()
        overall: dict[int, SnapshotRow] = {}
        all_rows: list[SnapshotRow] = []
        for result in results:
            slice_ = _create_slice(snapshot, result, config)
            rows = _rows_for(result, ids, public_ids, overall, latency)
            if result.key == OVERALL:
                overall = {r.model_id: r for r in rows if r.rank is not None}
            for row in rows:
                row.slice = slice_
            all_rows.extend(rows)
        SnapshotRow.objects.bulk_create(all_rows, batch_size=2000)
    return snapshot


def prune_snapshots(*, keep_all_days: int) -> int:
    """Thin old snapshots to the last published one of each day (rating history), drop old failures."""
    cutoff = timezone.now() - timedelta(days=keep_all_days)
    old = list(
        Snapshot.objects.filter(computed_at__lt=cutoff).values_list("id", "computed_at", "status")
    )
    last_of_day: dict[date, int] = {}
    for sid, at, status in old:
        if status == Snapshot.Status.PUBLISHED and sid > last_of_day.get(at.date(), 0):
            last_of_day[at.date()] = sid
    keep = set(last_of_day.values())
    doomed = [sid for sid, _, _ in old if sid not in keep]
    if doomed:
        Snapshot.objects.filter(id__in=doomed).delete()
    return len(doomed)


def recompute(
    *,
    trigger: str = "manual",
    progress: Progress = lambda jobs: jobs,
    full: bool = False,
) -> Snapshot:
    """Recompute every slice and publish the snapshot. On failure, record it and re-raise.
    `progress` wraps the slices to fit (see `fit_slices`); `full` recounts every battle
    instead of only the days that changed (see aggregation.aggregate)."""
    started = time.perf_counter()
    run = start_run(trigger=trigger)
    try:
        config = RatingConfig.current()
        cells = aggregate(full=full)
        t_agg = time.perf_counter() - started
        keys = dict(ArenaModel.objects.values_list("id", "key"))
        # One read of who is shown, for both the scale (fit) and the ranks (publish).
        public = public_models()
        results = fit_slices(cells, config, keys, progress, shown=public.values(), refit=full)
        t_fit = time.perf_counter() - started - t_agg
        snapshot = publish(
            results=results,
            cells=cells,
            config=config,
            trigger=trigger,
            timings={"aggregate": t_agg, "fit": t_fit, "started": started},
            snapshot=run,
            public_ids=public.keys(),
        )
    except Exception as exc:
        log.exception("Leaderboard recompute failed; the previous snapshot stays published")
        Snapshot.objects.filter(pk=run.pk).update(
            status=Snapshot.Status.FAILED,
            computed_at=timezone.now(),
            error=f"{type(exc).__name__}: {exc}"[:2000],
            duration_seconds=time.perf_counter() - started,
        )
        RECOMPUTE_SECONDS.labels("failed").observe(time.perf_counter() - started)
        raise
    RECOMPUTE_SECONDS.labels("published").observe(snapshot.duration_seconds)
    log.info(
        "Published snapshot %s: %s battles, %.2f s (SQL %.2f s, fit %.2f s)",
        snapshot.pk,
        snapshot.battles,
        snapshot.duration_seconds,
        snapshot.aggregate_seconds,
        snapshot.fit_seconds,
    )
    snapshot_published(snapshot.pk)
    snapshot_ready.send(sender=Snapshot, snapshot_id=snapshot.pk)
    prune_snapshots(keep_all_days=settings.SNAPSHOT_KEEP_ALL_DAYS)
    return snapshot
