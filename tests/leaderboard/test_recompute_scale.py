"""Issue 16 wiring: the recompute holds each board's scale by the models it shows, stores and
prints what was applied (`scale_label`), and the votes that hold #1 above #2."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from catalogue.models import ArenaModel, Visibility
from ingest.models import Battle, BattleKind, BattleSource, Outcome, Privacy
from leaderboard.models import SnapshotRow
from leaderboard.recompute import recompute
from leaderboard.selectors import board

STRENGTH = {"lb-m1": 1120.0, "lb-m2": 1060.0, "lb-m3": 1000.0, "lb-m4": 950.0, "lb-m5": 900.0}


def _model(key: str, visibility: str = Visibility.PUBLIC) -> ArenaModel:
    return ArenaModel.objects.create(key=key, display_name=key.upper(), visibility=visibility)


def _battle(i: int, a: int, b: int, top_wins: bool, task_type: str = "frontend") -> Battle:
    pair = f"scale-{i}"
    return Battle(
        pair_id=pair,
        user_hash=hashlib.sha256(f"u{i % 41}".encode()).hexdigest(),
        model_a_id=a,
        model_b_id=b,
        outcome=Outcome.A if top_wins else Outcome.B,
        kind=BattleKind.COMPLETION,
        privacy=Privacy.PRIVATE,
        source=BattleSource.API,
        content_hash=hashlib.sha256(pair.encode()).hexdigest(),
        task_type=task_type,
    )


def _arena(
    n: int = 3000, seed: int = 1, task_type: str = "frontend", models: tuple[str, ...] = ()
) -> dict[str, int]:
    """Battles between the STRENGTH models (or `models` of them), created if needed."""
    ids = {k: (ArenaModel.objects.filter(key=k).first() or _model(k)).pk for k in STRENGTH}
    keys = list(models or STRENGTH)
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(keys), n)
    b = (a + rng.integers(1, len(keys), n)) % len(keys)
    r = np.array([STRENGTH[k] for k in keys])
    wins = rng.random(n) < 1 / (1 + 10 ** ((r[b] - r[a]) / 400))
    start = Battle.objects.count()
    Battle.objects.bulk_create(
        [
            _battle(start + i, ids[keys[a[i]]], ids[keys[b[i]]], bool(wins[i]), task_type)
            for i in range(n)
        ]
    )
    return ids


def _losses(model: ArenaModel, ids: dict[str, int], n: int, wins: int = 0) -> None:
    """`n` battles of `model` against the arena's models, the first `wins` won, random slot."""
    rng = np.random.default_rng(7)
    opponents = list(ids.values())
    start = Battle.objects.count()
    rows = []
    for i in range(n):
        opp = opponents[i % len(opponents)]
        on_top = bool(rng.random() < 0.5)
        won = i < wins
        a, b = (model.pk, opp) if on_top else (opp, model.pk)
        rows.append(_battle(start + i, a, b, top_wins=(won == on_top)))
    Battle.objects.bulk_create(rows)


def _shown(snapshot_id: int, category: str = "overall") -> dict[str, float]:
    return {
        m["model"]: m["rating"] for m in board(category=category, snapshot_id=snapshot_id)["models"]
    }


@pytest.fixture
def sandwich_config(fast_config):
    fast_config.method = "sandwich"
    fast_config.save()
    return fast_config


@pytest.mark.parametrize("visibility", [Visibility.HIDDEN, Visibility.PRIVATE, Visibility.PUBLIC])
def test_a_model_with_40_straight_losses_does_not_move_the_shown_board(sandwich_config, visibility):
    # An endpoint returning empty completions: hidden or not, it is unbounded (never won),
    # so it is neither shown nor part of the mean that holds the scale.
    ids = _arena()
    before = _shown(recompute(trigger="test").pk)
    assert len(before) == 5
    broken = _model("lb-broken", visibility)
    _losses(broken, ids, 40)
    snap = recompute(trigger="test")
    after = _shown(snap.pk)
    assert set(after) == set(before)
    for key, rating in before.items():
        assert abs(after[key] - rating) < 0.5, key
    row = SnapshotRow.objects.get(slice__snapshot=snap, slice__key="overall", model=broken)
    assert row.status == "unbounded_low" and not row.public


def test_a_hidden_rated_model_does_not_hold_the_scale(sandwich_config):
    # A hidden model that is in the core (it won a few) is fitted, but the mean of the
    # *shown* models is what is held at 1000, on every board; before, it pulled every
    # shown rating up by about (1000 - its rating) / 6.
    ids = _arena()
    before = _shown(recompute(trigger="test").pk)
    weak = _model("lb-weak", Visibility.PRIVATE)
    _losses(weak, ids, 200, wins=12)
    snap = recompute(trigger="test")
    for category in ("overall", "task_type:frontend"):
        after = _shown(snap.pk, category)
        assert len(after) == 5
        assert np.mean(list(after.values())) == pytest.approx(1000.0, abs=1e-6)
    hidden = SnapshotRow.objects.get(slice__snapshot=snap, slice__key="overall", model=weak)
    assert hidden.status == "ok" and not hidden.public and hidden.rating < 700
    after = _shown(snap.pk)
    # the others move only by what the new battles say about them (a few points at most)
    assert max(abs(after[k] - before[k]) for k in before) < 5


def test_each_board_says_what_held_its_scale(sandwich_config, client, api):
    _arena()
    _arena(800, seed=2, task_type="backend", models=("lb-m1", "lb-m2", "lb-m4", "lb-m5"))
    sandwich_config.anchor = ArenaModel.objects.get(key="lb-m3")
    sandwich_config.save()
    snap = recompute(trigger="test")
    overall = board(snapshot_id=snap.pk)["category"]
    assert overall["scale_label"].startswith("lb-m3 held at 1000 (intervals: distance from")
    assert overall["anchor_applied"]
    assert _shown(snap.pk)["lb-m3"] == pytest.approx(1000.0, abs=1e-9)
    backend = board(category="task_type:backend", snapshot_id=snap.pk)["category"]
    want = "mean of the 4 shown models held at 1000 (lb-m3 is not rated here)"
    assert backend["scale_label"] == want and not backend["anchor_applied"]
    assert np.mean(list(_shown(snap.pk, "task_type:backend").values())) == pytest.approx(1000.0)
    # the page and the API print the label of the board shown, not the configured anchor
    page = client.get("/", {"category": "task_type:backend"}).content.decode()
    assert want in page and "lb-m3 held at" not in page
    assert "lb-m3 held at 1000" in client.get("/").content.decode()
    body = api.get("/api/v1/leaderboard", {"category": "task_type:backend"}).json()
    assert body["category"]["scale_label"] == want
    assert body["category"]["anchor_applied"] is False


def test_the_overall_board_says_how_many_votes_hold_first_place(sandwich_config, client, api):
    _arena()
    snap = recompute(trigger="test")
    category = board(snapshot_id=snap.pk)["category"]
    first = category["robustness"][0]
    assert first["upper"] == "lb-m1" and first["challenger"] in {"lb-m2", "lb-m3", "lb-m4"}
    votes = first["votes"]
    assert isinstance(votes, int) and 0 < votes < Battle.objects.count()
    assert first["gap"] == pytest.approx(_shown(snap.pk)["lb-m1"] - _shown(snap.pk)["lb-m2"])
    assert 1 <= len(category["robustness"]) <= 3
    assert board(category="task_type:frontend", snapshot_id=snap.pk)["category"]["robustness"] == []
    names = dict(ArenaModel.objects.values_list("key", "display_name"))
    page = client.get("/").content.decode()
    assert (
        f"{names['lb-m1']} stays the top-rated model unless {votes:,} votes are removed "
        f"(then {names[first['challenger']]} rates higher)"
    ) in page
    # the other views have other ranks: the line is the plain board's and says so
    assert "stays the top-rated" not in client.get("/", {"view": "controlled"}).content.decode()
    body = api.get("/api/v1/leaderboard").json()
    assert body["category"]["robustness"][0]["votes"] == votes
    # and how many added wins of a rival would put it above (analysis.added_votes)
    added, rival = first["added_votes"], first["added_by"]
    assert isinstance(added, int) and added > 0 and rival in {"lb-m2", "lb-m3", "lb-m4"}
    assert first["added_accounts"] >= 1  # every vote weighs 1 before the per-user bound
    assert (
        f"{names[rival]} would rate above {names['lb-m1']} after {added:,} more wins against it"
    ) in page
