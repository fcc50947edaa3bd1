"""Slice fits shared with other workers (leaderboard/fanout.py): the same boards, whoever fits them.

With a real Celery worker beside the recompute, the worker fits slices and the boards are
those of the in-process fit; a failed slice fails the run and keeps the previous board; a
claim whose worker died is fitted by the recompute once the claim lapses.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.redis_client import key_prefix, shared_redis
from leaderboard import fanout
from leaderboard.aggregation import aggregate
from leaderboard.fitting import FitSettings, fit_board
from leaderboard.models import RatingConfig, Snapshot
from leaderboard.recompute import fit_slices, public_models, recompute
from tests.celery_worker import wait_for


@pytest.fixture
def fan_out(settings):
    settings.RECOMPUTE_FAN_OUT = True
    assert fanout.enabled(), "the fan-out needs Redis and a non-eager Celery"


def _jobs() -> tuple[list[fanout.SliceJob], FitSettings]:
    from catalogue.models import ArenaModel

    config = RatingConfig.current()
    cells = aggregate()
    keys = dict(ArenaModel.objects.values_list("id", "key"))
    jobs = []
    for value in cells.values("language"):
        counts = cells.grouped(cells.mask("language", value), keys, min_votes=1)
        jobs.append(fanout.SliceJob(f"language:{value}", counts, config.slice_rounds))
    settings_ = FitSettings(
        anchor=None,
        anchor_value=1000.0,
        method=config.method,
        seed=int(config.seed),
        shown=tuple(sorted(public_models().values())),
    )
    return jobs, settings_


def _same(a, b) -> None:
    assert a.models == b.models
    np.testing.assert_allclose(a.rating, b.rating)
    np.testing.assert_allclose(a.ci_lower, b.ci_lower)


def _spec_keys() -> list[str]:
    client = shared_redis()
    return [k.decode() for k in client.scan_iter(f"{key_prefix()}:fanout:*:spec:*")]


@pytest.mark.django_db(transaction=True)
def test_a_worker_fits_slices_and_the_boards_are_the_in_process_ones(
    simulated, fan_out, celery_worker
):
    jobs, settings_ = _jobs()
    client = shared_redis()

    def until_the_worker_has_fitted_one() -> None:
        # The recompute's own fit of the overall board, standing still until the worker
        # has done a slice: the sharing is then certain, not a matter of timing.
        def helped():
            keys = [k.replace(":spec:", ":result:") for k in _spec_keys()]
            return keys and any(client.get(k) for k in keys)

        wait_for(helped, timeout=180)

    boards, fitted_by = fanout.fit_shared(
        jobs, fit_settings=settings_, meanwhile=until_the_worker_has_fitted_one
    )
    assert set(boards) == {j.key for j in jobs}
    assert any(who != fanout._me() for who in fitted_by.values()), fitted_by
    for job in jobs:
        _same(boards[job.key], fit_board(job.counts, settings=settings_, rounds=job.rounds))
    assert not _spec_keys()  # the run cleans up after itself


def test_a_fanned_out_recompute_publishes_the_same_boards(simulated, fan_out, settings):
    config = RatingConfig.current()
    from catalogue.models import ArenaModel

    keys = dict(ArenaModel.objects.values_list("id", "key"))
    cells = aggregate()
    shared = {r.key: r.board for r in fit_slices(cells, config, keys)}
    settings.RECOMPUTE_FAN_OUT = False
    alone = {r.key: r.board for r in fit_slices(cells, config, keys)}
    assert shared.keys() == alone.keys() and len(shared) > 10
    for key in shared:
        _same(shared[key], alone[key])


def test_a_failed_slice_fails_the_run_and_the_previous_board_stays(
    simulated, fan_out, settings, monkeypatch
):
    settings.RECOMPUTE_FAN_OUT = False
    previous = recompute(trigger="test")
    settings.RECOMPUTE_FAN_OUT = True

    def broken(counts, **kw):  # every category slice's fit (the overall board is fitted apart)
        raise FloatingPointError("singular")

    monkeypatch.setattr(fanout, "fit_board", broken)
    with pytest.raises(RuntimeError, match=r"fit of slice .* failed: FloatingPointError"):
        recompute(trigger="test")
    assert Snapshot.objects.filter(status="published").latest("id") == previous
    failed = Snapshot.objects.latest("id")
    assert failed.status == "failed" and "FloatingPointError" in failed.error


def test_a_dead_workers_claim_lapses_and_the_recompute_fits_that_slice(simulated, fan_out):
    jobs, settings_ = _jobs()
    client = shared_redis()
    taken: list[str] = []

    def a_worker_claims_one_and_dies() -> None:
        spec = sorted(_spec_keys())[0]
        claim = spec.replace(":spec:", ":claim:")
        client.set(claim, "dead-worker", ex=2)  # claimed, then never a result
        taken.append(spec.rsplit(":spec:", 1)[1])

    boards, fitted_by = fanout.fit_shared(
        jobs, fit_settings=settings_, meanwhile=a_worker_claims_one_and_dies
    )
    assert set(boards) == {j.key for j in jobs}
    assert fitted_by[taken[0]] == fanout._me()
    job = next(j for j in jobs if j.key == taken[0])
    _same(boards[job.key], fit_board(job.counts, settings=settings_, rounds=job.rounds))
