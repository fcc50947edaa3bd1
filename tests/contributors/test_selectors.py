"""`POST /user_scores` and the contributor pages, on a published board and real votes."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalogue.models import ArenaModel, Visibility
from contributors.models import Contributor
from ingest.models import Battle
from ingest.pseudonyms import pseudonymise_user
from leaderboard.models import RatingConfig
from leaderboard.recompute import recompute
from leaderboard.selectors import board
from tests.ingest.payloads import completion_item

USER = "vscode-user-1"


@pytest.fixture
def published(db):
    config = RatingConfig.current()
    config.rounds = config.slice_rounds = 50
    config.save()
    call_command("simulate_battles", "--battles", "3000", "--seed", "3", stdout=io.StringIO())
    recompute(trigger="test")


def vote(api, i: int, top: str, bottom: str, accepted: int, user: str = USER):
    body = {
        "pairId": f"p-{user}-{i}",
        "userId": user,
        "completionItems": [completion_item(0, top), completion_item(1, bottom)],
        "acceptedIndex": accepted,
        "version": "1.2.7",
        "privacy": "Private",
        "fileType": "python",
    }
    r = api.put("/add_completion_outcome", data=json.dumps(body), content_type="application/json")
    assert r.status_code == 200


def cast(api, n: int, *, user: str = USER, seed: int = 0, start: int = 0):
    # A user who always prefers gpt-4o-mini (the crowd's weakest model) when it is shown,
    # voting on the models of the published board.
    rng = np.random.default_rng(seed)
    keys = [m["model"] for m in board()["models"]]
    for i in range(start, start + n):
        top, bottom = rng.choice(keys, size=2, replace=False).tolist()
        if "gpt-4o-mini-2024-07-18" in (top, bottom):
            accepted = 0 if top == "gpt-4o-mini-2024-07-18" else 1
        else:
            accepted = int(rng.random() < 0.5)
        vote(api, i, top, bottom, accepted, user=user)


def scores(api, user: str = USER):
    r = api.post("/user_scores", data=json.dumps({"userId": user}), content_type="application/json")
    assert r.status_code == 200
    return r.json()


def test_nothing_below_twenty_votes(api, published):
    cast(api, 19)
    assert scores(api) == []


def test_history_of_one_list_per_twenty_votes(api, published):
    cast(api, 65)
    history = scores(api)
    assert len(history) == 3  # after 20, 40 and all 65 votes
    last = history[-1]
    public = set(
        ArenaModel.objects.filter(visibility=Visibility.PUBLIC).values_list("key", flat=True)
    )
    assert {s["model"] for s in last} <= public
    assert set(last[0]) == {"model", "elo", "votes"}
    assert abs(np.mean([s["elo"] for s in last]) - 1000.0) < 0.01
    # This user's favourite climbs above where the crowd puts it.
    ranked = [s["model"] for s in sorted(last, key=lambda s: -s["elo"])]
    assert ranked.index("gpt-4o-mini-2024-07-18") < len(ranked) - 1
    assert sum(s["votes"] for s in last) == 2 * 65


def test_cached_until_the_user_votes_again(api, published):
    cast(api, 40)
    first = scores(api)
    with CaptureQueriesContext(connection) as queries:
        assert scores(api) == first
    assert len(queries) <= 3  # the vote count and the published id; no fit, no battle scan
    cast(api, 25, seed=9, start=40)  # 25 more votes: a new list in the history
    assert len(scores(api)) == len(first) + 1


def test_private_models_never_appear(api, published):
    ArenaModel.objects.filter(key="codestral-2405").update(visibility=Visibility.PRIVATE)
    recompute(trigger="test")
    cast(api, 40)
    assert all(s["model"] != "codestral-2405" for lst in scores(api) for s in lst)


def test_contributor_pages(api, client, published):
    cast(api, 40)
    r = api.put(
        "/users",
        data=json.dumps(
            {"userId": USER, "username": "ada", "metadata": {"jobTitle": "Secret title"}}
        ),
        content_type="application/json",
    )
    assert r.status_code == 200
    cast(api, 5, user="not-registered")
    page = client.get("/contributors/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "ada" in text and "Secret title" not in text
    assert "not-registered" not in text and pseudonymise_user("not-registered") not in text
    mine = client.get("/contributors/ada/")
    assert mine.status_code == 200 and "gpt-4o-mini" in mine.content.decode()
    token = Contributor.objects.get().page_token
    private = client.get(f"/me/{token}/")
    assert private.status_code == 200 and private["X-Robots-Tag"].startswith("noindex")
    assert client.get("/me/not-a-token/").status_code == 404
    assert client.get("/contributors/nobody/").status_code == 404
    assert Battle.objects.filter(user_hash=pseudonymise_user(USER)).count() == 40


def test_votes_on_provisional_models_are_kept_and_marked(api, client, published):
    from tests.factories import ArenaModelFactory

    ArenaModelFactory(key="newcomer-1")  # public, no battles: below the board's minimum
    keys = [m["model"] for m in board()["models"]][:3]
    for i in range(24):
        top, bottom = ("newcomer-1", keys[i % 3]) if i % 2 else (keys[i % 3], keys[(i + 1) % 3])
        vote(api, i, top, bottom, accepted=i % 3 % 2)
    last = scores(api)[-1]
    by_model = {s["model"]: s for s in last}
    assert by_model["newcomer-1"]["provisional"] is True and by_model["newcomer-1"]["votes"] == 12
    assert all("provisional" not in s for k, s in by_model.items() if k != "newcomer-1")
    assert sum(s["votes"] for s in last) == 2 * 24
    # The personal page lists it apart, marked, as the main board does; the others are ranked.
    r = api.put(
        "/users",
        data=json.dumps({"userId": USER, "username": "ada"}),
        content_type="application/json",
    )
    assert r.status_code == 200
    html = client.get("/contributors/ada/").content.decode()
    ranked, rest = html.split('<section id="provisional">')
    provisional = rest.split("</section>")[0]
    assert "newcomer-1" not in ranked and all(k in ranked for k in keys)
    assert "-vote minimum" in provisional and 'class="badge provisional"' in provisional
    assert "newcomer-1" in provisional and not any(k in provisional for k in keys)


def test_a_panel_before_the_first_board(api, db):
    from catalogue.services import seed_demo_catalogue

    seed_demo_catalogue()
    keys = list(
        ArenaModel.objects.filter(visibility=Visibility.PUBLIC).values_list("key", flat=True)[:4]
    )
    for i in range(22):
        vote(api, i, keys[i % 4], keys[(i + 1) % 4], accepted=i % 2)
    history = scores(api)
    assert len(history) == 1
    assert {s["model"] for s in history[0]} == set(keys)
    assert all(s["provisional"] for s in history[0])
