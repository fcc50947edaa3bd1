"""HTTP caching of the public reads (leaderboard/http_cache.py): validators, 304s, headers."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.utils import timezone
from django.utils.http import http_date

from catalogue.models import ArenaModel
from contributors.models import Contributor
from leaderboard import selectors
from leaderboard.models import Snapshot
from leaderboard.recompute import recompute


def publish(at: dt.datetime | None = None) -> Snapshot:
    """A published snapshot without boards: enough for pages that show the empty state."""
    snap = Snapshot.objects.create(
        status=Snapshot.Status.PUBLISHED, computed_at=at or timezone.now(), method="bootstrap"
    )
    selectors.snapshot_published(snap.pk)
    return snap


def assert_public(r, settings) -> None:
    cc = {p.strip() for p in r["Cache-Control"].split(",")}
    assert cc == {
        "public",
        f"max-age={settings.ARENA_READ_MAX_AGE}",
        f"stale-while-revalidate={settings.ARENA_READ_STALE_WHILE_REVALIDATE}",
    }


def assert_not_public(r) -> None:
    assert not r.has_header("ETag") and not r.has_header("Last-Modified")
    assert "public" not in r.get("Cache-Control", "")


@pytest.fixture
def read_settings(settings):
    settings.ARENA_READ_MAX_AGE = 17
    settings.ARENA_READ_STALE_WHILE_REVALIDATE = 99
    return settings


@pytest.mark.parametrize("url", ["/", "/methodology/", "/correlations/", "/api/v1/categories"])
def test_200_carries_validators_and_304_repeats_them(client, db, read_settings, url):
    at = timezone.now().replace(microsecond=0) - dt.timedelta(hours=2)
    publish(at)
    r = client.get(url)
    assert r.status_code == 200
    etag = r["ETag"]
    assert etag.startswith('"s') and etag.endswith('"')
    assert r["Last-Modified"] == http_date(at.timestamp())
    assert_public(r, read_settings)
    # Nothing user-specific may ride along on a response every client shares.
    assert not r.cookies and "cookie" not in r.get("Vary", "").lower()

    again = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b""
    assert again["ETag"] == etag and again["Last-Modified"] == r["Last-Modified"]
    assert again["Cache-Control"] == r["Cache-Control"]
    # nginx's gzip weakens the tag; the comparison is weak.
    assert client.get(url, HTTP_IF_NONE_MATCH=f"W/{etag}").status_code == 304
    assert client.get(url, HTTP_IF_NONE_MATCH='"s0-other"').status_code == 200


def test_if_modified_since(client, db, read_settings):
    at = timezone.now().replace(microsecond=0) - dt.timedelta(hours=2)
    publish(at)
    r = client.get("/", HTTP_IF_MODIFIED_SINCE=http_date(at.timestamp()))
    assert r.status_code == 304 and r.content == b"" and r.has_header("ETag")
    assert_public(r, read_settings)
    earlier = http_date((at - dt.timedelta(seconds=1)).timestamp())
    assert client.get("/", HTTP_IF_MODIFIED_SINCE=earlier).status_code == 200


def test_304_renders_nothing_and_loads_no_board(
    client, db, read_settings, monkeypatch, django_assert_max_num_queries
):
    publish()
    etag = client.get("/slices/")["ETag"]

    def refuse(*args, **kwargs):
        raise AssertionError("the 304 path loaded the board")

    monkeypatch.setattr(selectors, "board", refuse)
    monkeypatch.setattr("leaderboard.views.render", refuse)
    with django_assert_max_num_queries(0):
        assert client.get("/slices/", HTTP_IF_NONE_MATCH=etag).status_code == 304


def test_new_snapshot_changes_the_etag(client, db, read_settings):
    publish(timezone.now() - dt.timedelta(hours=1))
    old = client.get("/methodology/")["ETag"]
    publish()
    r = client.get("/methodology/", HTTP_IF_NONE_MATCH=old)
    assert r.status_code == 200 and r["ETag"] != old and r.content


def test_nothing_published_has_no_validators(client, db, read_settings):
    r = client.get("/")
    assert r.status_code == 200
    assert_not_public(r)
    assert "no-cache" in r["Cache-Control"]
    # An If-None-Match of a later site cannot pin the empty page either.
    assert client.get("/", HTTP_IF_NONE_MATCH='"s1-x"').status_code == 200


def test_api_variants_errors_and_writes(api, client, simulated, read_settings):
    recompute(trigger="test")
    urls = [
        "/api/v1/leaderboard",
        "/api/v1/leaderboard?category=language:python",
        "/api/v1/leaderboard?format=csv",
        "/?category=language:python",
        "/",
    ]
    tags = {}
    for url in urls:
        r = client.get(url)
        assert r.status_code == 200, url
        assert_public(r, read_settings)
        tags[url] = r["ETag"]
    assert len(set(tags.values())) == len(urls)
    plain, python = urls[0], urls[1]
    assert client.get(python, HTTP_IF_NONE_MATCH=tags[python]).status_code == 304
    assert client.get(python, HTTP_IF_NONE_MATCH=tags[plain]).status_code == 200
    csv = client.get(urls[2], HTTP_IF_NONE_MATCH=tags[urls[2]])
    assert csv.status_code == 304 and csv.content == b""

    # Errors: no validators, no public caching.
    for url in (
        "/api/v1/leaderboard?category=language:klingon",
        "/api/v1/leaderboard?format=xml",
        "/api/v1/slices?dimension=nope",
        "/models/not-a-model/",
    ):
        r = client.get(url)
        assert 400 <= r.status_code < 500, url
        assert_not_public(r)
    # `*` asks whether the resource exists: an unknown category is still a 404.
    r = client.get("/api/v1/leaderboard?category=language:klingon", HTTP_IF_NONE_MATCH="*")
    assert r.status_code == 404

    # Writes and the other methods of the read routes.
    assert_not_public(api.post("/api/v1/leaderboard", data="{}", content_type="application/json"))
    vote = api.post("/api/v1/battles", data=json.dumps({}), content_type="application/json")
    assert 400 <= vote.status_code < 500
    assert_not_public(vote)

    # A model page changes with its own snapshot only.
    model = client.get("/models/codestral-2405/")
    assert model.status_code == 200 and model["ETag"] not in tags.values()
    ArenaModel.objects.filter(key="codestral-2405").update(display_name="Renamed")
    recompute(trigger="test")
    fresh = client.get("/models/codestral-2405/", HTTP_IF_NONE_MATCH=model["ETag"])
    assert fresh.status_code == 200 and b"Renamed" in fresh.content


def test_private_contributor_page_is_not_stored(api, client, db, read_settings):
    publish()
    r = api.put(
        "/users",
        data=json.dumps({"userId": "user-http-cache", "username": "grace"}),
        content_type="application/json",
    )
    assert r.status_code == 200
    token = Contributor.objects.get().page_token
    page = client.get(f"/me/{token}/")
    assert page.status_code == 200
    cc = {p.strip() for p in page["Cache-Control"].split(",")}
    assert {"private", "no-store"} <= cc and "public" not in cc
    assert not page.has_header("ETag")
    missing = client.get("/me/not-a-token/")
    assert missing.status_code == 404
    assert_not_public(missing)
