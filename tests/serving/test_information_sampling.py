"""With an information weight the pair table reads the published board (a model missing from
it is drawn more), and every served pair still stores the probability it was drawn with:
the table's entry for that pair."""

from __future__ import annotations

import numpy as np
import pytest
from django.utils import timezone

from analysis.latency import model_shares
from ingest.models import CompletionLog
from leaderboard import selectors as board_selectors
from leaderboard.models import Snapshot, SnapshotSlice
from serving.models import PairDistribution, SamplingConfig
from serving.selectors import serving_state
from serving.tasks import fit_latencies
from tests.serving.test_create_pair import post_pair
from tests.serving.test_sampling import FAST, NEW, SLOW, logged  # noqa: F401  (fixture)


def publish_board_counts(wins: int, losses: int) -> Snapshot:
    """A published overall board of FAST and SLOW only (NEW is under the vote minimum)."""
    snap = Snapshot.objects.create(
        status=Snapshot.Status.PUBLISHED, computed_at=timezone.now(), method="bootstrap"
    )
    SnapshotSlice.objects.create(
        snapshot=snap,
        key="overall",
        dimension="overall",
        battles=wins + losses,
        models_order=[FAST, SLOW],
        counts={
            "models": [FAST, SLOW],
            "a": [0, 0],
            "b": [1, 1],
            "outcome": [0, 1],
            "count": [wins, losses],
        },
    )
    board_selectors.snapshot_published(snap.pk)
    return snap


def configure(weight: float) -> None:
    config = SamplingConfig.current()
    config.tau_seconds, config.floor, config.information_weight = 0.1, 0.2, weight
    config.save()
    fit_latencies.apply().get()


def new_share() -> float:
    state = serving_state()
    probs = state.probabilities(chat_only=False)
    assert probs is not None
    return float(model_shares(probs)[[s.key for s in state.slots].index(NEW)])


def slow_new() -> float:
    """Probability of the pair SLOW-NEW: latency alone keeps it near its floor."""
    state = serving_state()
    probs = state.probabilities(chat_only=False)
    assert probs is not None
    keys = [s.key for s in state.slots]
    i, j = sorted((keys.index(SLOW), keys.index(NEW)))
    return float(probs[i, j])


def test_information_weight_draws_the_unseen_model_and_records_the_table_entry(
    api,
    logged,  # noqa: F811
    stub,
):
    publish_board_counts(120, 80)
    configure(0.0)
    assert serving_state().information is None  # lambda 0: the board is not even read
    latency_only = slow_new()
    configure(0.9)
    state = serving_state()
    assert state.information is not None and state.information_weight == 0.9
    # NEW is not on the board (cold): its slow pair is drawn far above its latency share
    assert slow_new() > latency_only + 0.1

    dist = PairDistribution.objects.first()
    assert dist is not None and dist.information_weight == 0.9
    table = {frozenset((p["a"], p["b"])): p["p"] for p in dist.pairs}
    probs = state.probabilities(chat_only=False)
    keys = [s.key for s in state.slots]
    for i, j in zip(*np.triu_indices(len(keys), 1), strict=True):
        assert probs[i, j] == pytest.approx(table[frozenset((keys[i], keys[j]))], rel=1e-12)

    drawn = set()
    for n in range(12):
        pair = post_pair(api, pairId=f"info-{n}").json()
        shown = frozenset(item["model"] for item in pair["completionItems"])
        drawn.add(shown)
        logs = CompletionLog.objects.filter(pair_id=f"info-{n}")
        assert logs.count() == 2
        assert all(log.pair_probability == pytest.approx(table[shown]) for log in logs)
    assert any(NEW in pair for pair in drawn)


def test_without_a_published_board_the_sampler_is_latency_aware_only(logged):  # noqa: F811
    configure(0.6)
    assert serving_state().information is None
    share = new_share()
    configure(0.0)
    assert new_share() == pytest.approx(share)
