"""Battles without a user id (the Copilot Arena release layout, native votes without one):
each is an independent vote in the clustered intervals, never one giant user."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.core.management import call_command

from analysis.leaderboard import compute_leaderboard
from analysis.simulate import simulate_battles
from catalogue.models import ArenaModel
from ingest.models import Battle
from ingest.transfer import import_battles
from leaderboard.aggregation import aggregate
from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute
from leaderboard.selectors import board

SAMPLE = Path(settings.BASE_DIR) / "data" / "copilot-arena-sample" / "copilot_arena_examples_v1.csv"
TRUTH = np.array([1030.0, 1018, 1000, 987, 982, 982, 981, 971, 966, 951, 941])


def _release_csv(path: Path, keys: list[str], n: int, seed: int) -> None:
    """n battles in the Copilot Arena release layout (no user column), model_a on top."""
    sim = simulate_battles(TRUTH, n, seed=seed)
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["prefix", "suffix", "model_a", "model_b", "acceptedIndex", "completion_a",
                      "completion_b"])  # fmt: skip
        for i, (a, b, o) in enumerate(zip(sim.a, sim.b, sim.outcome, strict=True)):
            out.writerow([f"# battle {i}\n", "", keys[a], keys[b], int(o), "x", "y"])


@pytest.fixture
def models_by_strength(db, fast_config) -> list[str]:
    call_command("seed_catalogue", stdout=io.StringIO())
    keys = list(ArenaModel.objects.order_by("key").values_list("key", flat=True))[: len(TRUTH)]
    assert len(keys) == len(TRUTH)
    return keys


def test_a_user_less_release_gets_intervals_like_independent_votes(models_by_strength, tmp_path):
    keys = models_by_strength
    path = tmp_path / "release.csv"
    _release_csv(path, keys, 20_000, seed=3)
    report = import_battles(path)
    assert report.created == 20_000 and not report.rejected
    assert set(Battle.objects.values_list("user_hash", flat=True)) == {""}

    snap = recompute(trigger="test")
    assert snap.users == 0 and snap.userless_battles == 20_000
    assert "20,000 battles without a user as independent votes" in snap.intervals
    rows = {m["model"]: m for m in board(snapshot_id=snap.pk)["models"]}
    widths = _widths(rows, keys)
    assert (widths > 0).all()
    # the same battles with independent-vote intervals, fitted directly (seeded bootstraps
    # of two resampling schemes: compared in the median)
    cells = aggregate()
    counts = cells.grouped(None, dict(ArenaModel.objects.values_list("id", "key")))
    rounds = RatingConfig.current().rounds
    iid = compute_leaderboard(counts, rounds=rounds, seed=0, clustered=False)
    assert abs(np.median(widths / _iid_widths(iid, keys)) - 1) <= 0.10
    # the closed form, per model: the clustered sandwich of singletons is the iid one
    config = RatingConfig.current()
    config.method = RatingConfig.Method.SANDWICH
    config.save()
    sandwich = {m["model"]: m for m in board(snapshot_id=recompute(trigger="test").pk)["models"]}
    iid = compute_leaderboard(counts, method="sandwich", clustered=False)
    ratio = _widths(sandwich, keys) / _iid_widths(iid, keys)
    assert np.all(np.abs(ratio - 1) <= 0.10), ratio

    # the intervals cover the simulated truth (on the board's scale: the mean at 1000)
    truth = TRUTH - TRUTH.mean() + 1000.0
    covered = sum(
        rows[k]["ci_lower"] <= t <= rows[k]["ci_upper"] for k, t in zip(keys, truth, strict=True)
    )
    assert covered >= 8, covered


def _widths(rows: dict, keys: list[str]) -> np.ndarray:
    return np.array([rows[k]["ci_upper"] - rows[k]["ci_lower"] for k in keys])


def _iid_widths(lb, keys: list[str]) -> np.ndarray:
    index = {m: i for i, m in enumerate(lb.models)}
    return np.array([lb.ci_upper[index[k]] - lb.ci_lower[index[k]] for k in keys])


def test_the_real_release_alone_has_intervals(fast_config):
    report = import_battles(SAMPLE, add_unknown_models=True)
    assert report.created == 112
    fast_config.min_model_votes = 1
    fast_config.save()
    snap = recompute(trigger="test")
    assert snap.users == 0 and snap.userless_battles == 112
    models = board(snapshot_id=snap.pk)["models"]
    assert models and all(m["ci_upper"] > m["ci_lower"] for m in models)
