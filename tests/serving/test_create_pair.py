"""`POST /create_pair` against the stub provider: shape, concurrency, clean-up, logs, limits."""

from __future__ import annotations

import json
import time
from collections import Counter

import pytest

from ingest.models import CompletionLog
from serving.models import ModelProvider
from tests.serving.conftest import SERVED

PREFIX = "import math\n\ndef area(r):\n    return "
SUFFIX = "\n\nprint(area(2))\n"


def pair_request(**extra) -> dict:
    # What the extension's inlineCompletionProvider sends (types.ts CompletionPairRequest).
    body = {
        "pairId": "11111111-2222-3333-4444-555555555555",
        "userId": "vscode-machine-id",
        "prefix": PREFIX,
        "suffix": SUFFIX,
        "midSpan": False,
        "temperature": 0.5,
        "maxTokens": 512,
        "topP": 0.9,
        "maxLines": 20,
        "privacy": "Private",
        "modelTags": [],
    }
    body.update(extra)
    return body


def post_pair(api, **extra):
    return api.post("/create_pair", pair_request(**extra), format="json")


def test_pair_has_the_extension_fields_and_two_different_served_models(api, served, stub):
    for key, (_kind, remote) in SERVED.items():
        stub.behave(remote, middle=f"math.pi * r ** 2  # {key}")
    response = post_pair(api)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["pairId"] == "11111111-2222-3333-4444-555555555555"
    top, bottom = body["completionItems"]
    for index, item in enumerate((top, bottom)):
        for name in ("completionId", "userId", "timestamp", "prompt", "completion", "model"):
            assert name in item, name
        assert item["pairIndex"] == index
        assert item["userId"] == "vscode-machine-id"
        assert isinstance(item["timestamp"], int)
        assert item["model"] in SERVED
        # Chat answers repeat the cursor lines; FiM answers do not: both end up as the middle.
        assert item["completion"] == f"math.pi * r ** 2  # {item['model']}"
        assert item["prefix"] == PREFIX and item["suffix"] == SUFFIX
        assert item["latency"] >= 0  # seconds the side took (no bound: a busy machine is slow)
    assert top["model"] != bottom["model"]
    assert top["pairCompletionId"] == bottom["completionId"]
    assert bottom["pairCompletionId"] == top["completionId"]


def test_both_providers_are_called_at_once(api, served, stub):
    # Two models only, 0.6 s and 1.0 s: concurrent calls take ~1.0 s, sequential ~1.6 s.
    ModelProvider.objects.filter(model__key="deepseek-coder-fim").update(enabled=False)
    stub.behave("stub-gpt", latency=0.6)
    stub.behave("stub-codestral", latency=1.0)
    started = time.perf_counter()
    response = post_pair(api)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200, response.content
    assert elapsed >= 1.0, elapsed  # the slower side
    assert stub.peak_in_flight == 2  # both calls were in flight at once
    latencies = {i["model"]: i["latency"] for i in response.json()["completionItems"]}
    assert latencies["gpt-4o-2024-08-06"] >= 0.6
    assert latencies["codestral-2405"] >= 1.0


def test_each_kind_gets_its_own_request(api, served, stub, secret_env):
    for _ in range(12):  # every model appears in some pair
        assert post_pair(api).status_code == 200
    chat = stub.for_model("stub-gpt")[0]
    assert chat.path == "/v1/chat/completions"
    assert chat.body["messages"][0]["role"] == "system"
    assert "<PREFIX>" + PREFIX + "</PREFIX>" in chat.body["messages"][-1]["content"]
    assert chat.body["stop"][0] == "</CODE>" and len(chat.body["stop"]) <= 4
    fim = stub.for_model("stub-codestral")[0]
    assert fim.path == "/v1/fim/completions"
    assert (fim.body["prompt"], fim.body["suffix"]) == (PREFIX, SUFFIX)
    text = stub.for_model("stub-deepseek")[0]
    assert text.path == "/v1/completions"
    assert (text.body["prompt"], text.body["suffix"]) == (PREFIX, SUFFIX)
    for recorded in (chat, fim, text):
        assert recorded.headers["authorization"] == f"Bearer {secret_env}"
        # Providers see this product in their logs, not the HTTP library.
        assert recorded.headers["user-agent"].startswith("code-arena")
        assert "httpx" not in recorded.headers["user-agent"]
        assert recorded.body["max_tokens"] == 512
        assert recorded.body["temperature"] == 0.5


def test_served_completions_are_logged_with_latency_and_no_code(api, served, stub):
    stub.behave("stub-gpt", latency=0.2)
    response = post_pair(api)
    items = response.json()["completionItems"]
    logs = {c.completion_id: c for c in CompletionLog.objects.all()}
    assert set(logs) == {i["completionId"] for i in items}
    for item in items:
        row = logs[item["completionId"]]
        assert row.served_by_us and row.succeeded
        assert row.pair_id == "11111111-2222-3333-4444-555555555555"
        assert row.pair_index == item["pairIndex"]
        assert row.pair_completion_id == item["pairCompletionId"]
        assert row.model.key == item["model"]
        assert row.latency_ms == pytest.approx(item["latency"] * 1000, abs=1.0)
        assert row.privacy == "Private"


def test_context_is_trimmed_to_the_token_budget(api, served, stub):
    # 40,000 lines: far over 6,144 tokens of prefix and 2,048 of suffix (4 bytes a token).
    prefix = "".join(f"x_{i} = {i}\n" for i in range(40_000)) + "y = "
    suffix = "\n" + "".join(f"z_{i} = {i}\n" for i in range(40_000))
    response = post_pair(api, prefix=prefix, suffix=suffix)
    assert response.status_code == 200, response.content
    item = response.json()["completionItems"][0]
    assert prefix.endswith(item["prefix"]) and item["prefix"].endswith("y = ")
    assert suffix.startswith(item["suffix"])
    assert 6144 * 4 * 0.75 <= len(item["prefix"].encode()) <= 6144 * 4
    assert 2048 * 4 * 0.75 <= len(item["suffix"].encode()) <= 2048 * 4
    sent = stub.requests[0].body
    text = sent.get("prompt") or sent["messages"][-1]["content"]
    assert "x_0 = 0\n" not in text and len(text) < 40_000


def test_positions_are_randomised(api, served, stub):
    ModelProvider.objects.filter(model__key="deepseek-coder-fim").update(enabled=False)
    tops = Counter(post_pair(api).json()["completionItems"][0]["model"] for _ in range(40))
    assert set(tops) == {"gpt-4o-2024-08-06", "codestral-2405"}
    assert min(tops.values()) >= 8  # P(fewer than 8 of 40 | p = 1/2) ~ 5e-5


def test_max_lines_and_max_tokens(api, served, stub, settings):
    settings.SERVING_MAX_OUTPUT_TOKENS = 300
    for remote in ("stub-gpt", "stub-codestral", "stub-deepseek"):
        stub.behave(remote, middle="a = 1\nb = 2\nc = 3")
    response = post_pair(api, maxLines=2, maxTokens=4096)
    assert response.status_code == 200, response.content
    for item in response.json()["completionItems"]:
        assert item["completion"] == "a = 1\nb = 2"
    assert {r.body["max_tokens"] for r in stub.requests} == {300}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"privacy": "Public"}, "privacy"),
        ({"userId": None}, "userId"),
        ({"prefix": None}, "prefix"),
        ({"maxLines": 0}, "maxLines"),
        ({"maxTokens": "many"}, "maxTokens"),
        ({"temperature": 7}, "temperature"),
        ({"modelTags": "fast"}, "modelTags"),
    ],
)
def test_invalid_requests_name_the_field_and_call_nothing(api, served, stub, change, field):
    body = pair_request(**change)
    body = {k: v for k, v in body.items() if v is not None}
    response = api.post("/create_pair", body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"]
    assert response.json()["error"] == "invalid"
    assert stub.requests == [] and CompletionLog.objects.count() == 0


def test_missing_pair_id_gets_one(api, served, stub):
    body = pair_request()
    del body["pairId"]
    response = api.post("/create_pair", body, format="json")
    assert response.status_code == 200
    assert len(response.json()["pairId"]) == 36


def test_fewer_than_two_servable_models_is_a_clear_503(api, served, stub):
    ModelProvider.objects.exclude(model__key="codestral-2405").update(enabled=False)
    response = post_pair(api)
    assert response.status_code == 503
    body = response.json()
    assert body["error"] == "pair_unavailable"
    assert "Fewer than two" in body["message"]
    assert stub.requests == []


def test_models_without_provider_hidden_or_without_key_are_never_sampled(
    api, served, stub, monkeypatch
):
    from catalogue.models import Visibility
    from tests.factories import ArenaModelFactory
    from tests.serving.conftest import add_provider

    ArenaModelFactory(key="no-provider-model")  # takes votes, never served here
    hidden = add_provider("hidden-model", "openai_chat", "stub-hidden", stub)
    hidden.model.visibility = Visibility.HIDDEN
    hidden.model.save()
    add_provider("keyless-model", "openai_chat", "stub-keyless", stub, api_key_env="UNSET_KEY_VAR")
    monkeypatch.delenv("UNSET_KEY_VAR", raising=False)
    seen = set()
    for _ in range(30):
        seen.update(i["model"] for i in post_pair(api).json()["completionItems"])
    assert seen == set(SERVED)


def test_model_tags_restrict_the_draw(api, served, stub):
    ModelProvider.objects.filter(model__key__in=["codestral-2405", "deepseek-coder-fim"]).update(
        tags="fim, fast"
    )
    for _ in range(10):
        models = {i["model"] for i in post_pair(api, modelTags=["fim"]).json()["completionItems"]}
        assert models == {"codestral-2405", "deepseek-coder-fim"}
    response = post_pair(api, modelTags=["gpu-cluster"])
    assert response.status_code == 503
    assert "modelTags" in response.json()["message"]


def test_pair_requests_are_rate_limited_per_user(api, served, stub, settings):
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES, "pair_user": "2/min"}
    assert post_pair(api).status_code == 200
    assert post_pair(api).status_code == 200
    response = post_pair(api)
    assert response.status_code == 429
    assert response.json()["error"] == "throttled"
    assert "Retry-After" in response.headers
    assert post_pair(api, userId="someone-else").status_code == 200


def test_http_clients_are_reused_and_released(api, served, stub):
    """Sequential pairs reuse one small client pool per provider; none stays marked busy."""
    from serving.engine import engine

    for _ in range(20):
        assert post_pair(api).status_code == 200
    for provider in served.values():
        shards = engine()._shards[provider.pk]
        assert shards.busy == [0] * len(shards.clients)
        assert len(shards.clients) == 1


def test_an_api_key_lifts_the_pair_throttles(keyed_api, served, stub, settings):
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES, "pair_ip": "1/min"}
    for _ in range(3):
        assert post_pair(keyed_api).status_code == 200
    bad = keyed_api.credentials(HTTP_AUTHORIZATION="Bearer arena_nope_nope")
    assert bad is None and post_pair(keyed_api).status_code == 401


def test_a_lone_surrogate_in_the_context_is_replaced_not_refused(api, served, stub):
    # The extension trims the context by UTF-16 units and can leave half a surrogate pair.
    body = json.dumps(pair_request(prefix=PREFIX + "'\ud83d", suffix="\udc00" + SUFFIX))
    r = api.post("/create_pair", data=body, content_type="application/json")
    assert r.status_code == 200, r.content
    assert len(r.json()["completionItems"]) == 2
