"""The rigging rules presence and affinity in the product's anomaly scan: a target-only and an
omnipresent-style rigger among honest users are flagged and held, a release restores their
votes to the board, and honest users (a few votes or many) are not flagged."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from catalogue.models import ArenaModel
from ingest.models import Battle, Hold, Outcome
from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute
from moderation import anomalies
from moderation.models import AnomalyReport
from moderation.services import resolve_report
from moderation.tasks import file_reports
from tests.factories import ArenaModelFactory, BattleFactory

TARGET_ONLY = "e" * 64
OMNIPRESENT = "f" * 64
RIGGERS = {TARGET_ONLY, OMNIPRESENT}
TARGET = 4  # of seven models ranked by strength, the fifth


@pytest.fixture
def seven(db: None) -> list[ArenaModel]:
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 50, 20
    config.save()
    return [ArenaModelFactory(key=f"m-{i}") for i in range(7)]


def _at(rng: np.random.Generator, day: int) -> object:
    start = timezone.now().replace(hour=8, minute=0, second=0, microsecond=0)
    return start - timedelta(days=day, seconds=int(rng.integers(0, 12 * 3600)))


def _arena(models: list[ArenaModel], rng: np.random.Generator) -> set[str]:
    """Honest users (Bradley-Terry on a spread of strengths, pairs served uniformly over 20
    days), the two riggers over the same days; returns the honest users."""
    strength = np.linspace(1.0, -1.0, len(models))
    out: list[Battle] = []
    honest = set()

    def vote(user: str, top: int, bottom: int, top_wins: bool, day: int) -> None:
        out.append(
            BattleFactory.build(
                user_hash=user,
                model_a=models[top],
                model_b=models[bottom],
                outcome=Outcome.A if top_wins else Outcome.B,
                received_at=_at(rng, day),
            )
        )

    for u in range(200):
        user = f"{u:064x}"
        honest.add(user)
        # most users vote a few times, some often
        n = int(rng.integers(2, 9)) if u < 120 else int(rng.integers(15, 60))
        day = int(rng.integers(0, 20))
        for _ in range(n):
            top, bottom = (int(m) for m in rng.choice(len(models), 2, replace=False))
            p_top = 1 / (1 + np.exp(strength[bottom] - strength[top]))
            vote(
                user, top, bottom, bool(rng.random() < p_top), (day + int(rng.integers(0, 3))) % 20
            )
    for i in range(300):
        # target-only: votes only in battles with the target, for it
        other = int(rng.choice([m for m in range(len(models)) if m != TARGET]))
        top, bottom = (TARGET, other) if i % 2 else (other, TARGET)
        vote(TARGET_ONLY, top, bottom, top == TARGET, i % 10)
        # omnipresent: every served battle; the target wins, elsewhere the models ranked
        # above it lose, and between two below it the vote is random
        top, bottom = (int(m) for m in rng.choice(len(models), 2, replace=False))
        if TARGET in (top, bottom):
            top_wins = top == TARGET
        elif min(top, bottom) < TARGET:
            top_wins = top > bottom
        else:
            top_wins = bool(rng.random() < 0.5)
        vote(OMNIPRESENT, top, bottom, top_wins, i % 10)
    Battle.objects.bulk_create(out, batch_size=2000)
    return honest


def _subjects(findings: list[anomalies.Finding], rule: str) -> set[str]:
    return {f.subject for f in findings if f.rule == rule}


def test_the_riggers_are_flagged_and_honest_users_are_not(seven: list[ArenaModel]) -> None:
    honest = _arena(seven, np.random.default_rng(7))
    presence, affinity = anomalies.presence(), anomalies.affinity()
    flagged = _subjects(presence, "presence") | _subjects(affinity, "affinity")
    assert TARGET_ONLY in _subjects(presence, "presence")
    assert flagged >= RIGGERS
    assert not flagged & honest
    # each finding says which model and how far off
    target_only = next(f for f in presence if f.subject == TARGET_ONLY)
    assert target_only.detail["model"] == "m-4" and target_only.detail["z"] >= 4.5
    assert "m-4" in target_only.detail["reason"]
    assert target_only.battles == 300
    omni = next(f for f in presence + affinity if f.subject == OMNIPRESENT)
    assert omni.detail["model"] in {"m-4", "m-5", "m-6"}  # the target or a model it props up
    # and both rules are part of the scan
    found = anomalies.find_all()
    assert {"presence", "affinity"} <= {f.rule for f in found}
    assert not {f.subject for f in found if f.rule in ("presence", "affinity")} & honest


def test_thresholds_are_settings(seven: list[ArenaModel], settings: object) -> None:
    _arena(seven, np.random.default_rng(7))
    settings.ANOMALY_RIGGING_MIN_VOTES = 301  # type: ignore[attr-defined]
    assert not anomalies.presence() and not anomalies.affinity()
    settings.ANOMALY_RIGGING_MIN_VOTES = 10  # type: ignore[attr-defined]
    settings.ANOMALY_PRESENCE_Z = 1e6  # type: ignore[attr-defined]
    settings.ANOMALY_AFFINITY_Z = 1e6  # type: ignore[attr-defined]
    assert not anomalies.presence() and not anomalies.affinity()


def test_a_flagged_rigger_is_held_and_a_release_restores_it(
    seven: list[ArenaModel], moderator: object
) -> None:
    _arena(seven, np.random.default_rng(7))
    first = recompute(trigger="test")
    file_reports()
    report = AnomalyReport.objects.get(rule="presence", subject=TARGET_ONLY)
    assert report.status == AnomalyReport.Status.OPEN
    held = Battle.objects.filter(user_hash=TARGET_ONLY, hold=Hold.QUARANTINE, excluded=True)
    assert held.count() == 300
    second = recompute(trigger="test")
    assert second.battles <= first.battles - 300 and second.held_battles >= 300

    resolve_report(report=report, exclude=False, reason="a fan, not a rigger", actor=moderator)
    assert not Battle.objects.filter(user_hash=TARGET_ONLY).exclude(hold="").exists()
    assert not Battle.objects.filter(user_hash=TARGET_ONLY, excluded=True).exists()
    third = recompute(trigger="test")
    assert third.battles == second.battles + 300
    file_reports()  # the next scan flags it again but does not hold what was released
    assert not Battle.objects.filter(user_hash=TARGET_ONLY, excluded=True).exists()
