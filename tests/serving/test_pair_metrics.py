"""Pair requests and provider latency per model, as /metrics shows them."""

from __future__ import annotations

from tests.arena_site.test_metrics import scrape, value
from tests.serving.conftest import SERVED
from tests.serving.test_create_pair import post_pair


def test_pairs_and_provider_latency_are_counted_per_model(api, client, served, stub):
    for _kind, remote in SERVED.values():
        stub.behave(remote, latency=0.05)
    before = scrape(client)
    assert post_pair(api).status_code == 200
    after = scrape(client)
    key = {"kind": "pair", "result": "ok"}
    assert value(after, "arena_pairs_total", **key) - value(before, "arena_pairs_total", **key) == 1

    def gained(name: str, model: str) -> float:
        return value(after, name, model=model) - value(before, name, model=model)

    calls = {m: gained("arena_provider_latency_seconds_count", m) for m in served}
    drawn = [m for m, n in calls.items() if n]
    assert sorted(calls.values()) == [0, 1, 1]
    # Each drawn model's one call took the stub's 50 ms at least.
    assert all(gained("arena_provider_latency_seconds_sum", m) >= 0.05 for m in drawn)


def test_a_failed_pair_is_counted_by_its_error(api, client, db):
    before = scrape(client)
    assert post_pair(api).status_code == 503  # no provider at all: pair_unavailable
    after = scrape(client)
    key = {"kind": "pair", "result": "pair_unavailable"}
    assert value(after, "arena_pairs_total", **key) - value(before, "arena_pairs_total", **key) == 1
