"""Realistic synthetic battles for demos and benchmarks, written in bulk.

Outcomes come from a Bradley-Terry model with the published Copilot Arena strengths
(`catalogue.demo`), a top-slot advantage like the published 82%, ties only
as "both bad" on edit battles, and slice labels drawn from mixes like the seed's (Python
about half of all battles). Small models lose extra points on frontend/backend tasks and
long contexts, as the seed reports, so the sliced pages have something true to find.
Rows are marked `source = simulated` and can be deleted with `--delete`.

Rows go through ingest's own writer (``ingest.rows.copy_rows``): COPY on PostgreSQL (a
million in well under a minute), bulk inserts on other databases.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
from django.db import transaction
from django.utils import timezone

from analysis.labels import LABELER_VERSION
from analysis.simulate import simulate_battles
from catalogue.demo import PUBLISHED_STRENGTHS
from catalogue.models import ArenaModel
from catalogue.services import seed_demo_catalogue

from .models import Battle, BattleKind, BattleSource, Outcome, Privacy
from .rows import ROW_DEFAULTS, Row, content_hash, copy_rows

LANGUAGES = {
    "python": 0.49,
    "javascript": 0.10,
    "typescript": 0.10,
    "java": 0.05,
    "cpp": 0.05,
    "go": 0.04,
    "rust": 0.03,
    "csharp": 0.03,
    "html": 0.03,
    "php": 0.02,
    "ruby": 0.02,
    "c": 0.02,
    "shellscript": 0.02,
}
TASK_TYPES = {
    "frontend": 0.22,
    "backend": 0.24,
    "data_ml": 0.18,
    "algorithmic": 0.14,
    "systems": 0.10,
    "other": 0.12,
}
CONTEXT_BUCKETS = {"<1k": 0.30, "1-4k": 0.35, "4-16k": 0.25, ">16k": 0.10}
BUCKET_TOKENS = {
    "<1k": (50, 999),
    "1-4k": (1000, 3999),
    "4-16k": (4000, 15999),
    ">16k": (16000, 60000),
}
NATURAL = {
    "en": 0.60,
    "unknown": 0.22,
    "zh": 0.08,
    "ru": 0.03,
    "de": 0.02,
    "es": 0.02,
    "fr": 0.02,
    "ja": 0.01,
}
SMALL_MODELS = ("gpt-4o-mini-2024-07-18", "qwen-2.5-coder-32b-instruct", "gemini-1.5-flash-002")
SMALL_MODEL_PENALTY = 35.0  # rating points lost on frontend/backend and on long contexts
TOP_SLOT_P = 0.82
EDIT_SHARE = 0.10
EDIT_BOTH_BAD_RATE = 0.15


@dataclass(frozen=True)
class SimulationResult:
    battles: int
    users: int
    seconds: float


def _choice(rng: np.random.Generator, table: dict[str, float], n: int) -> np.ndarray:
    keys = np.array(list(table), dtype=object)
    p = np.array(list(table.values()), dtype=float)
    return keys[rng.choice(len(keys), size=n, p=p / p.sum())]


def _battles(
    rng: np.random.Generator,
    hard_ratings: np.ndarray,
    ratings: np.ndarray,
    hard: np.ndarray,
    edit: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top model, bottom model and outcome of each battle: one Bradley-Terry draw per
    (penalised?, edit?) cell, since ratings differ by cell, not per battle."""
    n = len(hard)
    a = np.empty(n, dtype=np.int64)
    b = np.empty(n, dtype=np.int64)
    outcome = np.empty(n, dtype=np.int64)
    for is_hard in (False, True):
        for is_edit in (False, True):
            idx = np.flatnonzero((hard == is_hard) & (edit == is_edit))
            if idx.size == 0:
                continue
            sim = simulate_battles(
                hard_ratings if is_hard else ratings,
                idx.size,
                tie_rate=EDIT_BOTH_BAD_RATE if is_edit else 0.0,
                top_slot_p=TOP_SLOT_P,
                seed=rng,
            )
            a[idx], b[idx] = sim.a, sim.b
            outcome[idx] = sim.outcome  # OUTCOME_A/B/TIE = 0/1/2
    outcome[outcome == 2] = Outcome.BOTH_BAD  # the only "tie" the extension has
    return a, b, outcome


def _draw(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    keys = list(PUBLISHED_STRENGTHS)
    base = np.array([PUBLISHED_STRENGTHS[k] for k in keys])
    small = np.array([k in SMALL_MODELS for k in keys])
    task = _choice(rng, TASK_TYPES, n)
    bucket = _choice(rng, CONTEXT_BUCKETS, n)
    edit = rng.random(n) < EDIT_SHARE
    hard = np.isin(task, ["frontend", "backend"]) | np.isin(bucket, ["4-16k", ">16k"])
    a, b, outcome = _battles(rng, base - SMALL_MODEL_PENALTY * small, base, hard, edit)
    lo = np.array([BUCKET_TOKENS[x][0] for x in bucket])
    hi = np.array([BUCKET_TOKENS[x][1] for x in bucket])
    tokens = rng.integers(lo, hi + 1)
    n_users = max(1, n // 10)
    # Heavy-tailed activity: a few users cast many votes, most cast a handful.
    user = np.minimum((rng.pareto(1.2, size=n) * n_users / 20).astype(np.int64), n_users - 1)
    medians = np.exp(np.linspace(np.log(0.4), np.log(2.5), len(keys)))
    lat_a = medians[a] * np.exp(rng.normal(0, 0.5, n)) * 1000
    lat_b = medians[b] * np.exp(rng.normal(0, 0.5, n)) * 1000
    seconds_ago = rng.uniform(0, 90 * 86400, n)
    # Completion lengths (characters): each model has its typical length, and outcomes do
    # not depend on it, so the controlled board's length effect should come out near 0. A
    # stream of its own, so the draws above stay what they were for a seed.
    typical = np.exp(np.linspace(np.log(160.0), np.log(40.0), len(keys)))
    lengths = np.random.default_rng([seed & (2**64 - 1), 1])
    len_a = np.rint(typical[a] * np.exp(lengths.normal(0, 0.6, n))).astype(np.int64)
    len_b = np.rint(typical[b] * np.exp(lengths.normal(0, 0.6, n))).astype(np.int64)
    return {
        "keys": np.array(keys, dtype=object),
        "a": a,
        "b": b,
        "outcome": outcome,
        "edit": edit,
        "task": task,
        "bucket": bucket,
        "tokens": tokens,
        "user": user,
        "language": _choice(rng, LANGUAGES, n),
        "natural": _choice(rng, NATURAL, n),
        "lat_a": lat_a,
        "lat_b": lat_b,
        "seconds_ago": seconds_ago,
        "len_a": len_a,
        "len_b": len_b,
        "prefix_share": rng.uniform(0.6, 0.95, n),
    }


def _rows(d: dict[str, np.ndarray], model_ids: dict[str, int], run: str) -> Iterator[Row]:
    ids = np.array([model_ids[k] for k in d["keys"]])
    ma, mb = ids[d["a"]].tolist(), ids[d["b"]].tolist()
    now = timezone.now()
    users = [
        hashlib.sha256(f"sim-user-{u}".encode()).hexdigest()
        for u in range(int(d["user"].max()) + 1)
    ]
    chars = (d["tokens"] * 4).astype(np.int64)
    prefix_chars = (chars * d["prefix_share"]).astype(np.int64)
    for i in range(len(ma)):
        user_hash = users[d["user"][i]]
        kind = BattleKind.EDIT if d["edit"][i] else BattleKind.COMPLETION
        outcome = int(d["outcome"][i])
        yield {
            **ROW_DEFAULTS,
            "pair_id": f"sim-{run}-{i}",
            "user_hash": user_hash,
            "model_a_id": ma[i],
            "model_b_id": mb[i],
            "outcome": outcome,
            "kind": kind,
            "file_type": d["language"][i],
            "language": d["language"][i],
            "privacy": Privacy.PRIVATE,
            "latency_a_ms": float(d["lat_a"][i]),
            "latency_b_ms": float(d["lat_b"][i]),
            "prefix_chars": int(prefix_chars[i]),
            "suffix_chars": int(chars[i] - prefix_chars[i]),
            "completion_a_chars": int(d["len_a"][i]),
            "completion_b_chars": int(d["len_b"][i]),
            "client_version": "sim",
            "received_at": now - timedelta(seconds=float(d["seconds_ago"][i])),
            "source": BattleSource.SIMULATED,
            "content_hash": content_hash(
                kind=kind, user_hash=user_hash, model_a_id=ma[i], model_b_id=mb[i], outcome=outcome
            ),
            "natural_language": d["natural"][i],
            "context_tokens": int(d["tokens"][i]),
            "context_bucket": d["bucket"][i],
            "task_type": d["task"][i],
            "labeler_version": LABELER_VERSION,
        }


def simulate(
    *,
    battles: int,
    seed: int,
    progress: Callable[[Iterator[Row], int], Iterable[Row]] = lambda rows, _total: rows,
) -> SimulationResult:
    """Write `battles` simulated battles; returns counts and time taken. `progress` wraps
    the rows as they are written (given their total), for a progress bar."""
    import time

    started = time.perf_counter()
    seed_demo_catalogue()
    model_ids = dict(
        ArenaModel.objects.filter(key__in=PUBLISHED_STRENGTHS).values_list("key", "id")
    )
    draws = _draw(battles, seed)
    run = uuid.uuid4().hex[:8]
    rows = _rows(draws, model_ids, run)
    with transaction.atomic():
        copy_rows(progress(rows, battles))
    return SimulationResult(
        battles=battles, users=len(np.unique(draws["user"])), seconds=time.perf_counter() - started
    )


def delete_simulated() -> int:
    deleted, _ = Battle.objects.filter(source=BattleSource.SIMULATED).delete()
    return deleted
