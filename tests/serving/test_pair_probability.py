"""Each served pair stores the probability the sampler drew it with, on its completion logs,
and the vote of that pair carries it (single votes, batches, the ORM path); votes of pairs we
did not serve stay NULL."""

from __future__ import annotations

import pytest

from ingest import rows
from ingest.models import Battle, CompletionLog
from ingest.services import record_battle, record_battles
from ingest.votes import VoteIn
from serving.models import SamplingConfig
from serving.selectors import serving_state
from serving.tasks import fit_latencies
from tests.serving.test_create_pair import post_pair
from tests.serving.test_extension_flow import completion_outcome, shown_completion
from tests.serving.test_sampling import FAST, NEW, logged  # noqa: F401  (fixture)


def drawn_probability(pair: dict) -> float:
    """The sampler's probability of the pair's two models, from the serving state."""
    state = serving_state()
    probs = state.probabilities(chat_only=False)
    index = {slot.key: i for i, slot in enumerate(state.slots)}
    i, j = sorted(index[item["model"]] for item in pair["completionItems"])
    return float(probs[i, j])


def vote_in(pair_id: str, a: int, b: int, **extra) -> VoteIn:
    return VoteIn(
        pair_id=pair_id,
        user_id="u",
        model_a_id=a,
        model_b_id=b,
        outcome=0,
        kind="completion",
        privacy=extra.pop("privacy", "Private"),
        source="api",
        **extra,
    )


@pytest.fixture
def biased(logged):  # noqa: F811
    """A fitted latency-aware sampler (tau 0.1 s, floor 0.2): pairs are far from uniform."""
    config = SamplingConfig.current()
    config.tau_seconds, config.floor = 0.1, 0.2
    config.save()
    fit_latencies.apply().get()
    return logged


def test_served_pair_stores_its_probability_and_the_vote_carries_it(api, biased, stub):
    seen = set()
    for n in range(12):
        pair = post_pair(api, pairId=f"pp-{n}").json()
        expected = drawn_probability(pair)
        seen.add(round(expected, 6))
        logs = CompletionLog.objects.filter(pair_id=f"pp-{n}")
        assert logs.count() == 2
        assert all(log.pair_probability == pytest.approx(expected) for log in logs)
        if n < 3:  # shown and voted through the extension's routes
            top, bottom = pair["completionItems"]
            for i, (item, other) in enumerate([(top, bottom), (bottom, top)]):
                body = shown_completion(item, i, other, "Private")
                assert api.put("/add_completion", body, format="json").status_code == 200
            body = completion_outcome(pair, 0, "Private", None)
            assert api.put("/add_completion_outcome", body, format="json").status_code == 200
            battle = Battle.objects.get(pair_id=f"pp-{n}")
            assert battle.pair_probability == pytest.approx(expected)
            # The extension's own upload of the shown completions kept the served value.
            assert all(log.pair_probability == pytest.approx(expected) for log in logs.all())
    # The fast pair (p > 0.85) and at least one other: the stored values are the draw's.
    assert max(seen) > 0.85


def test_vote_of_a_pair_we_did_not_serve_stays_null(api, biased, stub):
    post_pair(api, pairId="served-1")
    fast, new = (biased[k].model for k in (FAST, NEW))
    record_battle(vote=vote_in("not-served", fast.pk, new.pk))
    assert Battle.objects.get(pair_id="not-served").pair_probability is None


@pytest.mark.parametrize("path", ["copy", "research_orm", "single_orm"])
def test_batches_and_the_orm_path_carry_it_too(api, biased, stub, monkeypatch, path):
    pair = post_pair(api, pairId="batch-1").json()
    expected = drawn_probability(pair)
    ids = {s.key: s.model_id for s in serving_state().slots}
    a, b = (ids[item["model"]] for item in pair["completionItems"])
    privacy = "Research" if path == "research_orm" else "Private"
    votes = [
        vote_in("batch-1", a, b, privacy=privacy),
        vote_in("batch-other", a, b, privacy=privacy),
    ]
    if path == "single_orm":
        monkeypatch.setattr(rows, "raw_sql", lambda: False)  # the embedded SQLite writer
        for vote in votes:
            record_battle(vote=vote)
    else:
        assert record_battles(votes=votes).created == 2
    assert Battle.objects.get(pair_id="batch-1").pair_probability == pytest.approx(expected)
    assert Battle.objects.get(pair_id="batch-other").pair_probability is None


def test_a_substituted_pair_stores_the_shown_pairs_probability(api, served, stub, settings):
    settings.SERVING_SUBSTITUTE_MIN_SECONDS = 0.2
    stub.behave("stub-codestral", status=500)
    for n in range(6):
        pair = post_pair(api, pairId=f"sub-{n}").json()
        assert "codestral-2405" not in {i["model"] for i in pair["completionItems"]}
        expected = drawn_probability(pair)
        logs = CompletionLog.objects.filter(pair_id=f"sub-{n}")
        assert all(log.pair_probability == pytest.approx(expected) for log in logs)


def test_a_failed_pair_stores_none(api, served, stub):
    for remote in ("stub-codestral", "stub-gpt", "stub-deepseek"):
        stub.behave(remote, status=500)
    assert post_pair(api, pairId="failed-1").status_code >= 500
    logs = CompletionLog.objects.filter(pair_id="failed-1")
    assert logs.exists() and all(log.pair_probability is None for log in logs)
