"""`GET /list_models` lists what this server can serve, as the reference server does."""

from __future__ import annotations

from catalogue.models import ArenaModel, Visibility
from serving.selectors import clear_serving_state
from tests.factories import ArenaModelFactory
from tests.serving.conftest import SERVED, add_provider


def test_only_servable_models_are_listed(api, served, stub, monkeypatch):
    ArenaModelFactory(key="collects-votes-only")  # public, no provider
    add_provider("no-key-here", "openai_chat", "m", stub, api_key_env="ARENA_TEST_MISSING_KEY")
    monkeypatch.delenv("ARENA_TEST_MISSING_KEY", raising=False)
    disabled = add_provider("switched-off", "openai_chat", "m", stub)
    disabled.enabled = False
    disabled.save()
    clear_serving_state()
    r = api.get("/list_models")
    assert r.status_code == 200 and r.json() == {"models": sorted(SERVED)}
    # The catalogue's meaning stays available under ?all=1.
    everything = api.get("/list_models?all=1").json()["models"]
    assert {"collects-votes-only", "no-key-here", "switched-off", *SERVED} <= set(everything)


def test_a_hidden_model_is_no_longer_listed(api, served):
    key = sorted(SERVED)[0]
    model = ArenaModel.objects.get(key=key)
    model.visibility = Visibility.HIDDEN
    model.save()
    clear_serving_state()
    assert key not in api.get("/list_models").json()["models"]


def test_all_takes_a_boolean_and_names_itself_otherwise(api, served):
    assert api.get("/list_models?all=false").json() == api.get("/list_models").json()
    for bad in ("all=null", "all=yes", "all=1&all=1"):
        r = api.get(f"/list_models?{bad}")
        assert r.status_code == 400 and "all" in r.json()["fields"], (bad, r.content)
