"""Votes bound to served pairs: unserved or mismatched pairs are stored held as unverified."""

from __future__ import annotations

import pytest

from ingest.models import Battle, CompletionLog, Hold
from tests.ingest.payloads import outcome_payload, vote

TOP, BOTTOM, OTHER = "gpt-4o-2024-08-06", "codestral-2405", "deepseek-coder-fim"


def served(pair_id: str, top: str, bottom: str, *, serving: str = "s") -> None:
    """The two shown completion logs the pair server writes before it answers."""
    from catalogue.models import ArenaModel

    ids = {k: ArenaModel.objects.get(key=k).id for k in (top, bottom)}
    for index, (key, partner) in enumerate(((top, bottom), (bottom, top))):
        CompletionLog.objects.create(
            completion_id=f"{serving}-{pair_id}-{key}",
            pair_completion_id=f"{serving}-{pair_id}-{partner}",
            pair_id=pair_id,
            pair_index=index,
            model_id=ids[key],
            served_by_us=True,
            privacy="Private",
            pair_probability=0.1,
        )


def put(api, pair_id: str, top: str = TOP, bottom: str = BOTTOM, **kw):
    body = outcome_payload(pairId=pair_id)
    body["completionItems"][0]["model"], body["completionItems"][1]["model"] = top, bottom
    body.update(kw)
    return api.put("/add_completion_outcome", body, format="json")


@pytest.fixture
def binding(settings, models):
    settings.VOTE_BINDING = "on"
    return models


def test_a_vote_for_a_served_pair_counts(api, binding):
    served("p-ok", TOP, BOTTOM)
    r = put(api, "p-ok")
    assert r.status_code == 200 and "held" not in r.json()
    b = Battle.objects.get(pair_id="p-ok")
    assert (b.hold, b.excluded, b.pair_probability) == ("", False, 0.1)


def test_either_order_of_the_served_models_counts(api, binding):
    served("p-swap", TOP, BOTTOM)
    assert put(api, "p-swap", BOTTOM, TOP).status_code == 200
    assert Battle.objects.get(pair_id="p-swap").hold == ""


@pytest.mark.parametrize(
    ("case", "models_sent"),
    [("never served", (TOP, BOTTOM)), ("other models", (TOP, OTHER))],
)
def test_unserved_or_mismatched_pairs_are_stored_held_as_unverified(
    api, binding, case, models_sent
):
    served("p-real", TOP, BOTTOM)
    pair_id = "p-forged" if case == "never served" else "p-real"
    r = put(api, pair_id, *models_sent)
    assert r.status_code == 200 and r.json()["held"] == Hold.UNVERIFIED  # stored, not lost
    b = Battle.objects.get(pair_id=pair_id)
    assert (b.hold, b.excluded) == (Hold.UNVERIFIED, True)
    assert put(api, pair_id, *models_sent).json() == {  # a replay says the same
        "status": "success",
        "created": False,
        "held": "unverified",
    }


def test_sides_of_two_servings_of_one_pair_id_do_not_make_a_pair(api, binding):
    served("p-twice", TOP, BOTTOM, serving="first")
    served("p-twice", OTHER, "gemini-1.5-flash-002", serving="second")
    put(api, "p-twice", TOP, OTHER)
    assert Battle.objects.get(pair_id="p-twice").hold == Hold.UNVERIFIED


def test_an_already_voted_pair_takes_no_second_vote(api, binding):
    served("p-once", TOP, BOTTOM)
    assert put(api, "p-once").status_code == 200
    r = put(api, "p-once", acceptedIndex=1)
    assert r.status_code == 409 and "pair" in r.json()["message"].lower()
    assert Battle.objects.filter(pair_id="p-once").count() == 1


def test_the_edit_route_is_bound_too(api, binding):
    from tests.ingest.payloads import edit_payload

    body = {**edit_payload(0), "pairId": "e-forged"}
    assert api.put("/add_edit_outcome", body, format="json").status_code == 200
    assert Battle.objects.get(pair_id="e-forged").hold == Hold.UNVERIFIED


def test_anonymous_native_votes_are_bound_and_api_keys_are_not(api, binding, api_key):
    assert api.post("/api/v1/battles", vote(pair_id="n-anon"), format="json").status_code == 201
    assert Battle.objects.get(pair_id="n-anon").hold == Hold.UNVERIFIED
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key}")
    assert api.post("/api/v1/battles", vote(pair_id="n-key"), format="json").status_code == 201
    assert Battle.objects.get(pair_id="n-key").hold == ""


def test_auto_binds_while_this_server_serves_pairs(api, models, settings):
    from serving.models import ModelProvider
    from serving.selectors import clear_serving_state

    settings.VOTE_BINDING = "auto"
    clear_serving_state()
    put(api, "a-off")  # no provider: votes are not bound (pairs come from elsewhere)
    assert Battle.objects.get(pair_id="a-off").hold == ""
    ModelProvider.objects.create(
        model=models[TOP], kind="openai_chat", base_url="http://127.0.0.1:9/v1", remote_model="x"
    )  # saving it clears this process's cached answer
    put(api, "a-on")
    assert Battle.objects.get(pair_id="a-on").hold == Hold.UNVERIFIED
    settings.VOTE_BINDING = "off"
    put(api, "a-never")
    assert Battle.objects.get(pair_id="a-never").hold == ""


def test_the_orm_path_binds_alike(api, binding, monkeypatch):
    from ingest import rows

    monkeypatch.setattr(rows, "raw_sql", lambda: False)
    served("o-ok", TOP, BOTTOM)
    put(api, "o-ok")
    put(api, "o-forged")
    assert dict(Battle.objects.values_list("pair_id", "hold")) == {
        "o-ok": "",
        "o-forged": Hold.UNVERIFIED,
    }
