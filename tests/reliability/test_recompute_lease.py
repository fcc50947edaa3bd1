"""The recompute lock is a lease: renewed while the run lives, gone soon after it dies; a dead
run's snapshot row is marked failed and the admin does not claim it is still running."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from core.locks import _Renewer, held, lock_key, single_flight
from core.redis_client import shared_redis
from leaderboard.models import RatingConfig, Snapshot
from leaderboard.recompute import DIED
from leaderboard.tasks import recompute_leaderboard, set_status
from tests.reliability.conftest import wait_until


def test_a_holder_that_stops_renewing_loses_the_lock(db):
    client = shared_redis()
    # A run that died: it took the lock with a one-second lease and never renewed it.
    dead = client.lock(lock_key("recompute"), timeout=1)
    assert dead.acquire(blocking=False)
    with single_flight("recompute", timeout=1) as mine:
        assert not mine
    wait_until(lambda: not client.exists(lock_key("recompute")), what="the lease to expire")
    with single_flight("recompute", timeout=30) as mine:
        assert mine


def test_a_live_holder_keeps_renewing(db, monkeypatch):
    renewals = []
    original = _Renewer.run

    def counting_run(self):
        real = self.lock.reacquire

        def reacquire():
            real()
            renewals.append(1)

        self.lock.reacquire = reacquire
        original(self)

    monkeypatch.setattr(_Renewer, "run", counting_run)
    client = shared_redis()
    with single_flight("recompute", timeout=1) as mine:
        assert mine
        # Several lease lengths later the lock is still ours, thanks to the renewals.
        wait_until(lambda: len(renewals) >= 6, what="six renewals")
        assert client.exists(lock_key("recompute"))
        assert held("recompute") is True
    assert held("recompute") is False


@pytest.fixture
def fast_config(db):
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 20, 10
    config.save()


def test_the_next_run_marks_a_dead_run_failed(fast_config):
    dead = Snapshot.objects.create(status="running", computed_at=timezone.now(), method="")
    sid = recompute_leaderboard.apply(kwargs={"trigger": "beat"}).get()
    dead.refresh_from_db()
    assert dead.status == "failed" and dead.error == DIED
    assert Snapshot.objects.get(pk=sid).status == "published"
    assert not Snapshot.objects.filter(status="running").exists()


def test_a_failing_run_is_recorded_on_its_own_row(fast_config, monkeypatch):
    from leaderboard import recompute as module

    def broken(*args, **kwargs):
        raise RuntimeError("fit exploded")

    monkeypatch.setattr(module, "fit_slices", broken)
    with pytest.raises(RuntimeError):
        recompute_leaderboard.apply(kwargs={"trigger": "beat"}).get()
    (row,) = Snapshot.objects.all()
    assert row.status == "failed" and "fit exploded" in row.error


def test_admin_does_not_claim_a_dead_run_is_running(client, db):
    admin = get_user_model().objects.create_superuser("root", "r@example.org", "pw-not-used")
    client.force_login(admin)
    Snapshot.objects.create(status="running", computed_at=timezone.now(), method="")
    set_status("running", trigger="admin")  # what the killed run said last
    page = client.get("/admin/leaderboard/snapshot/recompute/").content.decode()
    assert "<strong>failed</strong>" in page and DIED in page
    assert 'http-equiv="refresh"' not in page
    assert Snapshot.objects.get().status == "failed"


def test_admin_shows_running_while_the_lease_is_held(client, db):
    admin = get_user_model().objects.create_superuser("root", "r@example.org", "pw-not-used")
    client.force_login(admin)
    set_status("running", trigger="admin")
    with single_flight("recompute", timeout=30) as mine:
        assert mine
        page = client.get("/admin/leaderboard/snapshot/recompute/").content.decode()
    assert "<strong>running</strong>" in page
