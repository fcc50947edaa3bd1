"""The controlled overall board: ratings net of position, completion length and latency.

Reads the overall board's battles one row each (the covariates are per battle, so they
cannot come from the count cells of `aggregation`): at most the
`ARENA_CONTROLLED_MAX_BATTLES` most recently stored non-excluded ones (by id), restricted
to the models of the plain overall board (same merges, same vote minimum). Builds the
standard covariates (`analysis.contextual_data.style_features`: top slot, normalised
length difference in characters, normalised latency difference, top slot times the slower
side's log latency), groups them into cells with moments and 3 quantile bins per covariate
(`group_contextual`: the fit costs a few passes over at most pairs x outcomes x users x 27
cells, not over the battles) and fits `analysis.contextual.fit_contextual`, clustered by
user when the board's intervals are.

Unknown covariates. A battle without both completion lengths (stored before lengths were,
or sent without the texts) gets length difference 0, and one without both latencies gets
latency 0 and slow_top 0: the reference value, "no difference". Such a battle adds nothing
to a coefficient's score (its term is x * (y - p) = 0), so the coefficients are estimated
from the battles that have the covariate, while every battle still informs the ratings;
leaving them out instead would rest the controlled board on other battles than the plain
one (today most battles have no lengths) and make the side-by-side comparison mean less.
The cost: a model's unknown-length battles are not corrected for length. The board says
how many battles had each covariate. A covariate known for fewer than `MIN_KNOWN` battles
is left out of the fit (its coefficient would be the ridge's zero with no information).

Reuse. Reading and fitting the per-battle rows costs seconds at the default cap, far more
than the incremental count refresh, while its coefficients move slowly; a fit younger than
`ARENA_CONTROLLED_REFIT_SECONDS` over the same models and settings is reused (kept in the
cache, which a full recompute bypasses), and the board says when it was fitted.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.utils import timezone

from analysis.contextual import ContextualFit, fit_contextual
from analysis.contextual_data import group_contextual, style_features
from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, GroupedCounts
from analysis.ranks import intervals_apart
from analysis.scale import SCALE
from catalogue.selectors import merge_targets
from ingest.models import Battle, Outcome

from .controlled_context import ContextChoice, choose, interaction_columns

log = logging.getLogger(__name__)
CACHE_KEY = "lb:controlled-fit"
MIN_KNOWN = 200  # battles with a covariate known before it enters the fit
BINS = 3  # quantile bins per covariate (analysis.contextual_data: 0.03 se from per-battle)
_OUTCOMES = {
    Outcome.A: OUTCOME_A,
    Outcome.B: OUTCOME_B,
    Outcome.TIE: OUTCOME_TIE,
    Outcome.BOTH_BAD: OUTCOME_TIE,
}
# What one coefficient means in words, for a typical contrast: (unit of the covariate, text).
# length / latency: x = (a - b) / (a + b) is 1/3 when one side is twice the other.
EXAMPLES: dict[str, tuple[float, str]] = {
    "top": (1.0, "being the completion shown on top"),
    "length": (1.0 / 3.0, "a completion twice as long as the other (in characters)"),
    "latency": (1.0 / 3.0, "a completion that took twice as long to arrive as the other"),
    "slow_top": (
        float(np.log(2.0)),
        "the change of the top-slot advantage when the slower of the two took twice the typical latency",
    ),
    "top_ctx": (
        float(np.log(2.0)),
        "the change of the top-slot advantage when the context is twice as long as typical",
    ),
    "length_ctx": (
        float(np.log(2.0)) / 3.0,
        "the change of the length effect (twice as long) when the context is twice as long as typical",
    ),
}


@dataclass(frozen=True)
class ControlledBoard:
    """The controlled fit of the overall board and what it read."""

    fit: ContextualFit
    battles: int  # battles fitted
    length_known: int
    latency_known: int
    max_battles: int
    capped: bool  # more battles were stored than were read
    context: ContextChoice | None = None  # context-length interactions: tried, kept or not
    fitted_at: datetime = field(default_factory=timezone.now)

    def coefficients(self) -> list[dict[str, Any]]:
        """Each covariate's effect in log-odds and points, with its 95% interval, and the
        same for the typical contrast of `EXAMPLES`."""
        out = []
        for c in self.fit.coefficients():
            unit, text = EXAMPLES.get(c["feature"], (1.0, f"one unit of {c['feature']}"))
            pts = (SCALE * c["log_odds"], SCALE * c["lower"], SCALE * c["upper"])
            out.append(
                {
                    **c,
                    "points_lower": pts[1],
                    "points_upper": pts[2],
                    "example": text,
                    "example_unit": unit,
                    "example_points": unit * pts[0],
                    "example_lower": unit * pts[1],
                    "example_upper": unit * pts[2],
                }
            )
        return out

    def to_json(self) -> dict[str, Any]:
        fit = self.fit
        return {
            "coefficients": self.coefficients(),
            "battles": self.battles,
            "length_known": self.length_known,
            "latency_known": self.latency_known,
            "max_battles": self.max_battles,
            "capped": self.capped,
            "context": self.context.to_json() if self.context is not None else None,
            "clustered": fit.clustered,
            "clusters": fit.clusters,
            "converged": fit.converged,
            "scale_label": fit.scale_label[:300],
            "fitted_at": self.fitted_at.isoformat(),
        }


# A battle as `_read` reads it: model ids, outcome, user hash, completion lengths in
# characters, latencies in milliseconds, context tokens (None where unknown).
BattleRow = tuple[
    int, int, int, str, int | None, int | None, float | None, float | None, int | None
]


def _read(limit: int) -> tuple[list[BattleRow], bool]:
    """The newest `limit` battles' rows, and whether there were more (one row beyond the cap
    is read to know, instead of counting the table)."""
    table = Battle._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT model_a_id, model_b_id, outcome, user_hash, completion_a_chars, "
            "completion_b_chars, latency_a_ms, latency_b_ms, context_tokens "
            f"FROM {table} WHERE NOT excluded "
            "ORDER BY id DESC LIMIT %s",
            [limit + 1],
        )
        rows: list[BattleRow] = cursor.fetchall()
    return rows[:limit], len(rows) > limit


def _float(values: Sequence[float | None]) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def _reuse_key(**inputs: Any) -> str:
    return hashlib.sha256(repr(sorted(inputs.items())).encode()).hexdigest()


def _recent_fit(key: str) -> ControlledBoard | None:
    try:
        kept = cache.get(CACHE_KEY)
    except Exception:  # the cache away: fit afresh
        log.warning("Cache unavailable; fitting the controlled board afresh", exc_info=True)
        return None
    if not kept or kept.get("key") != key:
        return None
    board = kept.get("board")
    age = (timezone.now() - board.fitted_at).total_seconds() if board else None
    return board if age is not None and age < settings.ARENA_CONTROLLED_REFIT_SECONDS else None


def controlled_board(
    *,
    overall: GroupedCounts,
    keys: dict[int, str],
    anchor: str | None,
    anchor_value: float,
    shown: Collection[str],
    clustered: bool,
    max_battles: int | None = None,
    refit: bool = False,
) -> ControlledBoard | None:
    """The controlled fit over the models of `overall` (the plain overall board's counts);
    None when off (`ARENA_CONTROLLED_MAX_BATTLES` = 0) or there are no battles to fit.
    A recent fit on the same models and settings is reused unless `refit`."""
    limit = settings.ARENA_CONTROLLED_MAX_BATTLES if max_battles is None else max_battles
    if limit <= 0 or not overall.total:
        return None
    key = _reuse_key(
        models=overall.models,
        shown=sorted(shown),
        anchor=anchor,
        anchor_value=anchor_value,
        clustered=clustered,
        limit=limit,
        merges=sorted(merge_targets().items()),
    )
    if not refit and settings.ARENA_CONTROLLED_REFIT_SECONDS > 0:
        recent = _recent_fit(key)
        if recent is not None:
            return recent
    board = _fit(
        overall=overall,
        keys=keys,
        anchor=anchor,
        anchor_value=anchor_value,
        shown=shown,
        clustered=clustered,
        limit=limit,
    )
    if board is not None and settings.ARENA_CONTROLLED_REFIT_SECONDS > 0:
        try:
            cache.set(
                CACHE_KEY, {"key": key, "board": board}, settings.ARENA_CONTROLLED_REFIT_SECONDS
            )
        except Exception:
            log.warning("Cache unavailable; the controlled fit is not kept", exc_info=True)
    return board


def _positions(
    overall: GroupedCounts, keys: dict[int, str], *columns: tuple[int, ...]
) -> list[np.ndarray]:
    """Columns of model ids as indices into `overall` (merges applied; -1 for a model not
    on it)."""
    target = merge_targets()
    position = {pk: overall.models.index(k) for pk, k in keys.items() if k in overall.models}
    return [
        np.array([position.get(target.get(pk, pk), -1) for pk in ids], dtype=np.int64)
        for ids in columns
    ]


def _engine_outcomes(stored: tuple[int, ...]) -> np.ndarray:
    outcome_map = np.zeros(max(_OUTCOMES) + 1, dtype=np.int64)
    for ours, engine in _OUTCOMES.items():
        outcome_map[ours] = engine
    return outcome_map[np.array(stored, dtype=np.int64)]


@dataclass(frozen=True)
class _Covariates:
    """The fit's covariate columns per kept battle, which of them enter it, and how many
    battles had each kind known."""

    columns: dict[str, np.ndarray]
    features: list[str]
    extra: list[str]
    length_known: int
    latency_known: int
    context_known: int


def _covariates(cols: list[tuple[Any, ...]], keep: np.ndarray) -> _Covariates:
    len_a, len_b = _float(cols[4])[keep], _float(cols[5])[keep]
    lat_a, lat_b = _float(cols[6])[keep], _float(cols[7])[keep]
    n = int(keep.sum())

    length_ok = np.isfinite(len_a) & np.isfinite(len_b)
    x, _ = style_features(
        length_top=np.where(length_ok, len_a, 0.0), length_bottom=np.where(length_ok, len_b, 0.0)
    )  # unknown: both 0, so the normalised difference is 0 (the reference)
    columns = {"top": x[:, 0], "length": x[:, 1]}
    latency_ok = np.isfinite(lat_a) & np.isfinite(lat_b) & (lat_a > 0) & (lat_b > 0)
    columns["latency"], columns["slow_top"] = np.zeros(n), np.zeros(n)
    if latency_ok.any():
        xl, lnames = style_features(
            length_top=np.zeros(int(latency_ok.sum())),  # only the latency columns are used
            length_bottom=np.zeros(int(latency_ok.sum())),
            latency_top=lat_a[latency_ok] / 1000.0,
            latency_bottom=lat_b[latency_ok] / 1000.0,
        )  # slow_top centred on the median over the battles whose latencies are known
        for name in ("latency", "slow_top"):
            columns[name][latency_ok] = xl[:, lnames.index(name)]
    length_known, latency_known = int(length_ok.sum()), int(latency_ok.sum())
    features = ["top"]
    if length_known >= MIN_KNOWN:
        features.append("length")
    if latency_known >= MIN_KNOWN:
        features += ["latency", "slow_top"]
    extra, context_known = interaction_columns(columns, features, _float(cols[8])[keep])
    return _Covariates(columns, features, extra, length_known, latency_known, context_known)


def _users(hashes_column: tuple[str, ...], keep: np.ndarray) -> np.ndarray:
    """A cluster index per kept battle: its user's, or one of its own without a user."""
    hashes = np.array(hashes_column, dtype=object)[keep]
    alone = np.flatnonzero(hashes == "")
    hashes[alone] = [f"battle {i}" for i in alone]
    _, inverse = np.unique(hashes, return_inverse=True)
    return np.asarray(inverse, dtype=np.int64).ravel()


def _fit(
    *,
    overall: GroupedCounts,
    keys: dict[int, str],
    anchor: str | None,
    anchor_value: float,
    shown: Collection[str],
    clustered: bool,
    limit: int,
) -> ControlledBoard | None:
    rows, capped = _read(limit)
    if not rows:
        return None
    cols: list[tuple[Any, ...]] = list(zip(*rows, strict=True))
    a, b = _positions(overall, keys, cols[0], cols[1])
    keep = (a >= 0) & (b >= 0) & (a != b)
    if not keep.any():
        return None
    outcome = _engine_outcomes(cols[2])[keep]
    cov = _covariates(cols, keep)
    every = cov.features + (cov.extra if cov.context_known >= MIN_KNOWN else [])
    cc = group_contextual(
        a[keep],
        b[keep],
        outcome,
        np.column_stack([cov.columns[f] for f in every]),
        models=overall.models,
        feature_names=every,
        # one row per battle: a battle without a user is a cluster of its own
        user=_users(cols[3], keep) if clustered else None,
        bins=BINS,
    )
    context = choose(
        cc,
        cov.features,
        cov.extra,
        known=cov.context_known,
        min_known=MIN_KNOWN,
        reuse_key=_reuse_key(models=overall.models, features=cov.features, limit=limit),
    )
    if len(context.features) < len(every):
        cc = cc.select(context.features)
    present = anchor is not None and anchor in overall.models
    fit = fit_contextual(
        cc,
        anchor=anchor if present else None,
        anchor_value=anchor_value,
        shown=sorted(shown),
        clustered=clustered,
    )
    return ControlledBoard(
        fit=fit,
        battles=int(keep.sum()),
        length_known=cov.length_known,
        latency_known=cov.latency_known,
        max_battles=limit,
        capped=capped,
        context=context,
    )


VIEWS = ("plain", "controlled", "ignored")  # ignored: leaderboard/ignored_board.py


# A variant's (rating, lower, upper, rank) for one board row.
Variant = tuple[float | None, float | None, float | None, int | None]


def _opt_float(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _opt_int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def variant_rows(
    rows: Sequence[Mapping[str, object]], pick: Callable[[Mapping[str, object]], Variant]
) -> list[dict[str, object]]:
    """Board rows as a variant view shows them: `rating`, the interval and `rank` are the
    variant's, `pick(row)` -> (rating, lower, upper, rank), so the table, its sort and the
    filters work unchanged; the plain ones kept as `plain_rating` / `plain_rank`; ordered by
    the variant's rank."""
    out: list[dict[str, object]] = []
    for r in rows:
        rating, lower, upper, rank = pick(r)
        plain_rank = _opt_int(r["rank"])
        out.append(
            {
                **r,
                "plain_rank": r["rank"],
                "plain_rating": r["rating"],
                "rank": rank,
                "rating": rating,
                "ci_lower": lower,
                "ci_upper": upper,
                "rank_change": None if rank is None or plain_rank is None else plain_rank - rank,
                "rank_change_clear": intervals_apart(
                    (lower, upper), (_opt_float(r.get("ci_lower")), _opt_float(r.get("ci_upper")))
                ),
            }
        )
    far = float("inf")
    return sorted(
        out,
        key=lambda r: (_opt_int(r["rank"]) or far, -(_opt_float(r["rating"]) or -far)),
    )


def controlled_rows(rows: Sequence[Mapping[str, object]]) -> list[dict[str, object]]:
    """Board rows of the controlled view (`variant_rows` with the controlled fit's values)."""
    return variant_rows(
        rows,
        lambda r: (
            _opt_float(r.get("controlled_rating")),
            _opt_float(r.get("controlled_ci_lower")),
            _opt_float(r.get("controlled_ci_upper")),
            _opt_int(r.get("controlled_rank")),
        ),
    )
