"""Each anomaly rule on crafted data; reports are filed once, their votes held (not excluded)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from core.models import AuditEntry
from ingest.models import Battle, BattleKind, Outcome
from moderation import anomalies
from moderation.models import AnomalyReport
from moderation.services import resolve_report
from moderation.tasks import file_reports
from tests.factories import ArenaModelFactory, BattleFactory

HONEST = "a" * 64
SUSPECT = "b" * 64


@pytest.fixture
def trio(db):
    return [ArenaModelFactory(key=k) for k in ("m-one", "m-two", "m-three")]


def battles(n, *, user, models, outcome=Outcome.A, start=None, gap=timedelta(minutes=5), **kw):
    # noon yesterday: a run of battles minutes apart stays on one UTC day
    start = start or (timezone.now() - timedelta(days=1)).replace(
        hour=12, minute=0, second=0, microsecond=0
    )
    out = []
    for i in range(n):
        a, b = models[i % 3], models[(i + 1) % 3]
        out.append(
            BattleFactory.build(
                user_hash=user,
                model_a=a,
                model_b=b,
                outcome=outcome,
                received_at=start + i * gap,
                **kw,
            )
        )
    Battle.objects.bulk_create(out)


def subjects(findings, rule):
    return {f.subject for f in findings if f.rule == rule}


def test_daily_cap(trio, settings):
    settings.ANOMALY_DAILY_CAP = 30
    battles(31, user=SUSPECT, models=trio, gap=timedelta(seconds=60))
    battles(30, user=HONEST, models=trio, gap=timedelta(seconds=60))
    assert subjects(anomalies.daily_cap(), "daily_cap") == {SUSPECT}


def test_top_slot(trio):
    battles(19, user=SUSPECT, models=trio, outcome=Outcome.A)
    battles(
        1, user=SUSPECT, models=trio, outcome=Outcome.B, start=timezone.now() - timedelta(hours=2)
    )
    battles(20, user=HONEST, models=trio, outcome=Outcome.A)
    battles(
        2, user=HONEST, models=trio, outcome=Outcome.B, start=timezone.now() - timedelta(hours=2)
    )
    found = anomalies.top_slot()
    assert subjects(found, "top_slot") == {SUSPECT}  # 19/20 = 95%; honest 20/22 = 91%
    assert next(f for f in found if f.subject == SUSPECT).detail["top_share"] == 0.95
    battles(15, user="c" * 64, models=trio, outcome=Outcome.A)  # all top, but fewer than 20 votes
    assert "c" * 64 not in subjects(anomalies.top_slot(), "top_slot")


def test_outlier_test_flags_the_contrarian(trio):
    one, two, three = trio
    crowd = []
    for u in range(40):  # everyone: one beats two, two beats three
        crowd += [
            BattleFactory.build(user_hash=f"{u:064x}", model_a=one, model_b=two, outcome=Outcome.A),
            BattleFactory.build(
                user_hash=f"{u:064x}", model_a=two, model_b=three, outcome=Outcome.A
            ),
        ]
    contrarian = [
        BattleFactory.build(user_hash=SUSPECT, model_a=one, model_b=two, outcome=Outcome.B)
        for _ in range(3)
    ]
    contrarian += [
        BattleFactory.build(user_hash=SUSPECT, model_a=two, model_b=three, outcome=Outcome.B)
        for _ in range(3)
    ]
    Battle.objects.bulk_create(crowd + contrarian)
    found = anomalies.outliers()
    assert subjects(found, "outlier") == {SUSPECT}
    assert next(f for f in found if f.subject == SUSPECT).detail["score"] > 20


def test_ip_burst(trio, settings):
    settings.ANOMALY_IP_BURST_VOTES = 10
    minute = timezone.now().replace(second=0, microsecond=0) - timedelta(hours=1)
    battles(
        11,
        user=SUSPECT,
        models=trio,
        start=minute,
        gap=timedelta(seconds=2),
        ip_hash="ffff0000ffff0000",
    )
    battles(
        10,
        user=HONEST,
        models=trio,
        start=minute,
        gap=timedelta(seconds=2),
        ip_hash="1111222233334444",
    )
    assert subjects(anomalies.ip_bursts(), "ip_burst") == {"ffff0000ffff0000"}


def test_inhuman_pace(trio):
    battles(12, user=SUSPECT, models=trio, gap=timedelta(milliseconds=700))
    battles(12, user=HONEST, models=trio, gap=timedelta(seconds=40))
    assert subjects(anomalies.inhuman_pace(), "inhuman_pace") == {SUSPECT}


def test_implausible_latency(trio):
    battles(3, user=SUSPECT, models=trio, latency_a_ms=3.0, latency_b_ms=900.0)
    battles(3, user=HONEST, models=trio, latency_a_ms=450.0, latency_b_ms=900.0)
    assert subjects(anomalies.implausible_latency(), "implausible_latency") == {SUSPECT}


def test_old_and_excluded_battles_are_ignored(trio, settings):
    settings.ANOMALY_DAILY_CAP = 5
    battles(
        10,
        user=SUSPECT,
        models=trio,
        start=timezone.now() - timedelta(days=60),
        gap=timedelta(seconds=30),
    )
    battles(10, user=HONEST, models=trio, gap=timedelta(seconds=30), excluded=True)
    assert anomalies.daily_cap() == []
    # Held votes are still examined: the user stays flagged while they wait for review.
    held = "c" * 64
    battles(6, user=held, models=trio, gap=timedelta(seconds=30), excluded=True, hold="quarantine")
    assert subjects(anomalies.daily_cap(), "daily_cap") == {held}


def test_reports_are_filed_once_and_their_votes_held_not_excluded(trio, settings, moderator):
    battles(
        12, user=SUSPECT, models=trio, gap=timedelta(milliseconds=500), kind=BattleKind.COMPLETION
    )
    first = file_reports()
    assert first["created"] >= 1 and first["held"] == 12
    assert file_reports() == {
        "created": 0,
        "refreshed": first["created"],
        "held": 0,
        "auto_excluded": 0,
    }  # refreshed, not duplicated
    # The user keeps voting while flagged: the new votes are held too.
    battles(
        2,
        user=SUSPECT,
        models=trio,
        gap=timedelta(milliseconds=500),
        start=timezone.now() - timedelta(minutes=1),
    )
    assert file_reports()["held"] == 2
    Battle.objects.filter(received_at__gte=timezone.now() - timedelta(minutes=2)).delete()
    report = AnomalyReport.objects.get(rule="inhuman_pace")
    assert report.status == "open"
    # Held pending review by default, never excluded for good automatically.
    assert set(Battle.objects.values_list("hold", "excluded")) == {("quarantine", True)}
    assert AuditEntry.objects.filter(action="hold battles", actor_name="system").exists()
    assert (
        resolve_report(report=report, exclude=True, reason="scripted client", actor=moderator) == 12
    )
    report.refresh_from_db()
    assert report.status == "excluded" and report.resolved_by == moderator
    assert set(Battle.objects.values_list("hold", "excluded")) == {("", True)}
    assert AuditEntry.objects.filter(
        action="exclude battles", reason="scripted client", affected=12
    ).exists()


def test_hold_can_be_switched_off(trio, settings):
    settings.ANOMALY_HOLD = False
    battles(12, user=SUSPECT, models=trio, gap=timedelta(milliseconds=500))
    assert file_reports()["held"] == 0
    assert not Battle.objects.filter(excluded=True).exists()


def test_auto_exclude_setting(trio, settings):
    settings.ANOMALY_AUTO_EXCLUDE = True
    battles(12, user=SUSPECT, models=trio, gap=timedelta(milliseconds=500))
    file_reports()
    assert Battle.objects.filter(user_hash=SUSPECT, excluded=True).count() == 12
    assert AuditEntry.objects.filter(actor_name="system").exists()


def _bt_battles(models, rng, *, users, votes_each, both_bad_users=0):
    """Honest votes (Bradley-Terry on a spread of strengths, positions random) as Battle
    objects; the first ``both_bad_users`` users also cast one "both bad" edit vote each."""
    strength = np.linspace(0.5, -0.5, len(models))
    out = []
    for u in range(users):
        for _ in range(votes_each):
            top, bottom = rng.choice(len(models), 2, replace=False)
            p_top = 1 / (1 + np.exp(strength[bottom] - strength[top]))
            out.append(
                Battle(
                    user_hash=f"{u:064x}",
                    model_a=models[top],
                    model_b=models[bottom],
                    outcome=Outcome.A if rng.random() < p_top else Outcome.B,
                    kind=BattleKind.EDIT,
                )
            )
        if u < both_bad_users:
            out.append(
                Battle(
                    user_hash=f"{u:064x}",
                    model_a=models[0],
                    model_b=models[1],
                    outcome=Outcome.BOTH_BAD,
                    kind=BattleKind.EDIT,
                )
            )
    return out


def _store(battles_):
    for i, b in enumerate(battles_):
        b.pair_id, b.content_hash = f"bt-{i}", f"{i:064x}"
        b.privacy, b.source = "Private", "api"
    Battle.objects.bulk_create(battles_, batch_size=2000)


@pytest.fixture
def seven(db):
    return [ArenaModelFactory(key=f"m-{i}") for i in range(7)]


def test_a_one_sided_prolific_voter_is_flagged_and_an_honest_one_is_not(seven, settings):
    settings.ANOMALY_OUTLIER_MIN_VOTES = 5
    rng = np.random.default_rng(3)
    crowd = _bt_battles(seven, rng, users=120, votes_each=25)
    target = seven[5]  # below the middle: it loses to most
    rigged = []
    for i in range(1000):  # the target wins every battle it is in, on top or at the bottom
        other = seven[[0, 1, 2, 3, 4, 6][i % 6]]
        top, bottom = (target, other) if i % 2 else (other, target)
        rigged.append(
            Battle(
                user_hash=SUSPECT,
                model_a=top,
                model_b=bottom,
                outcome=Outcome.A if top == target else Outcome.B,
            )
        )
    # An honest user who, like most, prefers the stronger model of each pair it meets.
    steady = [
        Battle(
            user_hash=HONEST,
            model_a=seven[i % 3],
            model_b=seven[6 - i % 3],
            outcome=Outcome.A if i % 4 else Outcome.B,
        )
        for i in range(30)
    ]
    _store(crowd + rigged + steady)
    found = {f.subject: f for f in anomalies.outliers()}
    assert SUSPECT in found and found[SUSPECT].detail["votes"] == 1000
    assert found[SUSPECT].detail["log_score"] > np.log(20.0) + 100
    assert HONEST not in found
    # The input is what the test is defined on: one row per (user, pair, choice).
    _users, (user, pair, choice, _count) = anomalies.outlier_counts()
    keys = set(zip(user.tolist(), pair.tolist(), choice.tolist(), strict=True))
    assert len(keys) == len(user)


def test_one_both_bad_vote_does_not_flag_an_honest_user(seven, settings):
    # Sixty honest users with one "both bad" each among ~1.5% of a pair's votes: scored as a
    # rare tie, each such vote alone was ~e^3.5 against a threshold of 20 (e^3.0).
    rng = np.random.default_rng(5)
    _store(_bt_battles(seven[:2], rng, users=240, votes_each=16, both_bad_users=60))
    assert Battle.objects.filter(outcome=Outcome.BOTH_BAD).count() == 60
    flagged = subjects(anomalies.outliers(), "outlier")
    assert len(flagged & {f"{u:064x}" for u in range(60)}) <= 2
    _users, (_u, _p, choice, _n) = anomalies.outlier_counts()
    assert 2 not in set(choice.tolist())  # no tie choice was scored
