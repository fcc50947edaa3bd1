"""The recompute pipeline: SQL aggregation, every slice, atomic publication, exclusions."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.grouping import group_battles
from analysis.leaderboard import compute_leaderboard
from catalogue.models import ArenaModel, Visibility
from ingest.models import Battle, Outcome
from leaderboard import recompute as recompute_module
from leaderboard.aggregation import DIMENSIONS, aggregate
from leaderboard.models import Snapshot, SnapshotRow, SnapshotSlice
from leaderboard.recompute import public_ranks, recompute
from leaderboard.selectors import board, categories, published_snapshot_id


def test_aggregation_matches_battle_rows(simulated):
    cells = aggregate()
    assert cells.battles == Battle.objects.count() == 6000
    assert cells.simulated == 6000
    assert cells.users == Battle.objects.values("user_hash").distinct().count()
    # python counts cell by cell
    got: dict = {}
    overall = cells.mask("all")
    for a, b, o, c in zip(
        cells.model_a[overall],
        cells.model_b[overall],
        cells.outcome[overall],
        cells.count[overall],
        strict=True,
    ):
        got[(a, b, o)] = got.get((a, b, o), 0) + c
    want = {}
    engine = {Outcome.A: 0, Outcome.B: 1, Outcome.TIE: 2, Outcome.BOTH_BAD: 2}
    for a, b, o in Battle.objects.values_list("model_a_id", "model_b_id", "outcome"):
        key = (a, b, engine[o])
        want[key] = want.get(key, 0) + 1
    assert got == want
    # Each slice dimension: its values' cells hold exactly the battles with that value.
    for dim in DIMENSIONS:
        for value in cells.values(dim):
            n = int(cells.count[cells.mask(dim, value)].sum())
            assert n == Battle.objects.filter(**{dim: value}).count(), (dim, value)
        assert sum(int(cells.count[cells.mask(dim, v)].sum()) for v in cells.values(dim)) == 6000


def test_overall_board_equals_engine_on_raw_battles(simulated, fast_config):
    # Independent-vote intervals, as the engine call below (clustered: test_clustered_board).
    fast_config.intervals = "iid"
    # Unweighted, as the engine call below (the per-user bound: test_influence_cap.py).
    fast_config.user_cap_day = fast_config.user_cap_total = 0
    fast_config.dedup_contexts = False
    fast_config.save()
    snap = recompute(trigger="test")
    rows = list(Battle.objects.values_list("model_a__key", "model_b__key", "outcome"))
    engine = {0: 0, 1: 1, 2: 2, 3: 2}
    # same model order as the snapshot, so the seeded bootstrap draws the same resamples
    order = SnapshotSlice.objects.get(snapshot=snap, key="overall").models_order
    counts = group_battles(
        [r[0] for r in rows], [r[1] for r in rows], [engine[r[2]] for r in rows], models=order
    )
    expected = compute_leaderboard(counts, rounds=200, seed=0)
    data = board(snapshot_id=snap.pk)
    got = {m["model"]: m for m in data["models"]}
    for i, key in enumerate(expected.models):
        assert got[key]["rating"] == pytest.approx(expected.rating[i], abs=1e-6)
        assert got[key]["ci_lower"] == pytest.approx(expected.ci_lower[i], abs=1e-6)
        assert got[key]["votes"] == expected.votes[i]
    assert data["snapshot"]["battles"] == 6000
    assert data["category"]["top_slot"]["p"] == pytest.approx(0.82, abs=0.03)


def test_every_slice_is_published(simulated):
    snap = recompute(trigger="test")
    keys = {c["key"] for c in categories(snapshot_id=snap.pk)}
    assert {
        "overall",
        "kind:completion",
        "language:python",
        "task_type:frontend",
        "context_bucket:<1k",
        "natural_language:en",
    } <= keys
    python = board(category="language:python", snapshot_id=snap.pk)
    assert python["category"]["battles"] == Battle.objects.filter(language="python").count()
    assert all(m["rank_change"] is not None for m in python["models"])


def test_small_slices_get_no_board(simulated, fast_config):
    fast_config.slice_min_battles = 1000
    fast_config.save()
    snap = recompute(trigger="test")
    keys = {c["key"] for c in categories(snapshot_id=snap.pk)}
    assert "language:python" in keys  # ~2,900 battles
    assert "language:ruby" not in keys  # ~120 battles


def test_only_public_models_are_shown_and_ranked(simulated):
    hidden = ArenaModel.objects.get(key="deepseek-coder-fim")
    hidden.visibility = Visibility.PRIVATE
    hidden.save()
    snap = recompute(trigger="test")
    shown = [m["model"] for m in board(snapshot_id=snap.pk)["models"]]
    assert "deepseek-coder-fim" not in shown and len(shown) == 10
    assert min(m["rank"] for m in board(snapshot_id=snap.pk)["models"]) == 1
    # its battles still count for the others: it is in the fit
    assert SnapshotRow.objects.filter(
        slice__snapshot=snap, slice__key="overall", model=hidden, public=False
    ).exists()


def test_excluded_battles_do_not_count(simulated):
    Battle.objects.filter(model_a__key="codestral-2405").update(excluded=True)
    snap = recompute(trigger="test")
    codestral = next(
        m for m in board(snapshot_id=snap.pk)["models"] if m["model"] == "codestral-2405"
    )
    assert codestral["votes"] == Battle.objects.filter(model_b__key="codestral-2405").count()
    assert snap.battles == Battle.objects.filter(excluded=False).count()


def test_failed_recompute_keeps_previous_snapshot(simulated, monkeypatch):
    first = recompute(trigger="test")
    before = board(snapshot_id=first.pk)

    def explode(*args, **kwargs):
        raise RuntimeError("disk full half-way through")

    # fail while the new snapshot's rows are being written, after its slices went in
    monkeypatch.setattr(recompute_module.SnapshotRow.objects, "bulk_create", explode)
    with pytest.raises(RuntimeError):
        recompute(trigger="test")
    assert published_snapshot_id() == first.pk
    assert Snapshot.objects.filter(status=Snapshot.Status.PUBLISHED).count() == 1
    failed = Snapshot.objects.get(status=Snapshot.Status.FAILED)
    assert "disk full" in failed.error
    assert SnapshotSlice.objects.filter(snapshot__status=Snapshot.Status.FAILED).count() == 0
    assert board(snapshot_id=first.pk) == before


def test_new_snapshot_replaces_the_published_one(simulated):
    first = recompute(trigger="test")
    assert published_snapshot_id() == first.pk
    Battle.objects.filter(pk__in=Battle.objects.values("pk")[:100]).delete()
    second = recompute(trigger="test")
    assert published_snapshot_id() == second.pk
    assert board()["snapshot"]["battles"] == 5900


def test_empty_database_publishes_an_empty_board(fast_config):
    snap = recompute(trigger="test")
    data = board(snapshot_id=snap.pk)
    assert data["models"] == [] and snap.battles == 0


def test_public_ranks_upper_bound_rule():
    lower = np.array([10.0, 5.0, 0.0, -20.0])
    upper = np.array([20.0, 15.0, 8.0, -10.0])
    shown = np.array([True, True, True, True])
    # model 2's upper (8) is below model 0's lower (10): one model surely better
    assert public_ranks(lower, upper, shown).tolist() == [1, 1, 2, 4]
    shown[0] = False
    assert public_ranks(lower, upper, shown).tolist() == [0, 1, 1, 3]


def test_old_snapshots_are_thinned_to_one_per_day(simulated):
    from datetime import timedelta

    from django.utils import timezone

    from leaderboard.recompute import prune_snapshots

    snaps = [recompute(trigger="test") for _ in range(4)]
    day = (timezone.now() - timedelta(days=10)).replace(hour=6, minute=0)  # +0..2 h stays that day
    for i, s in enumerate(snaps[:3]):  # three on one old day, the newest kept
        Snapshot.objects.filter(pk=s.pk).update(computed_at=day + timedelta(hours=i))
    Snapshot.objects.create(status=Snapshot.Status.FAILED, computed_at=day, method="", error="x")
    assert prune_snapshots(keep_all_days=2) == 3
    assert set(Snapshot.objects.values_list("id", flat=True)) == {snaps[2].pk, snaps[3].pk}


def test_rank_changes_beyond_noise_are_told_apart_and_small_boards_say_so(simulated, client):
    snap = recompute(trigger="test")
    overall = {m["model"]: m for m in board(snapshot_id=snap.pk)["models"]}
    small = next(
        c["key"]
        for c in sorted(categories(snapshot_id=snap.pk), key=lambda c: c["battles"])
        if c["key"] != "overall"
    )
    data = board(category=small, snapshot_id=snap.pk)
    assert data["category"]["small_sample"] is not None
    changed = [m for m in data["models"] if m["rank_change"]]
    assert changed, "a small board moves some ranks"
    for m in data["models"]:
        o = overall[m["model"]]
        apart = m["ci_upper"] < o["ci_lower"] or o["ci_upper"] < m["ci_lower"]
        assert m["rank_change_clear"] is apart
    page = client.get("/", {"category": small}).content.decode()
    assert "Small sample:" in page
    noise = [m for m in changed if not m["rank_change_clear"]]
    assert noise and page.count("within sampling noise") == len(noise)
    assert board(snapshot_id=snap.pk)["category"]["small_sample"] is None


@pytest.mark.parametrize("vendor", ["postgresql", "sqlite"])
def test_counts_after_a_merge_are_on_the_board_basis(simulated, client, monkeypatch, vendor):
    from django.contrib.auth import get_user_model
    from django.db import connection

    from catalogue.services import merge_model

    if vendor == "sqlite":  # the embedded path: one scan of the battles
        monkeypatch.setattr(connection, "vendor", "sqlite")
    source = ArenaModel.objects.get(key="gemini-1.5-flash-002")
    target = ArenaModel.objects.get(key="gemini-1.5-pro-002")
    actor = get_user_model().objects.create_user("mod")
    merge_model(source=source, target=target, reason="same model", actor=actor)
    between = Battle.objects.filter(
        model_a__in=(source, target), model_b__in=(source, target)
    ).count()
    assert between > 0
    snap = recompute(trigger="test")
    assert snap.battles == 6000 - between
    assert snap.simulated_battles == snap.battles  # every battle here is simulated
    page = client.get("/").content.decode()
    assert f"{snap.battles:,} of the {snap.battles:,} battles" in page
