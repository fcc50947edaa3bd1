"""The lean path of the machine routes answers exactly as the full stack does.

`arena_site.lean_wsgi.MachineRouteDispatch` (the site's WSGI application) sends cookie-less
requests for the vote and pair routes through a lean handler and `core.lean.LeanView`.
Each test here runs the same sequence of requests twice from the same state -- once through
Django's own handler (the full middleware stack and the DRF views), once through the
dispatch -- and compares, request by request, status, headers and body, then what was
stored, the API-key tallies and the metrics. Requests cover valid votes, replays and
conflicts, every kind of malformed body, other methods and media types, bad and good API
keys, throttling, oversized bodies, hostile URLs, HTTPS settings and a database that is
down. The one difference by design is `Vary: Cookie` (lean_wsgi's docstring says why).
"""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import sys
import time
from types import SimpleNamespace

import pytest
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import OperationalError, close_old_connections, connection, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from rest_framework.renderers import BrowsableAPIRenderer

from arena_site.lean_wsgi import SKIPPED, MachineRouteDispatch, lean_middleware
from core import auth, hotcache, throttles
from core.metrics import PAIRS, VOTES
from core.models import ApiClient
from core.renderers import SafeJSONRenderer
from core.services import issue_api_key, revoke_api_key
from ingest.models import Battle, CodeContext, CompletionCode, CompletionLog, SingleOutcome
from serving import services as serving_services
from serving.errors import PairUnavailable
from serving.views import CreatePairView
from tests.ingest.helpers import all_text_in_database
from tests.ingest.test_extension_routes import completion_item, edit_payload, outcome_payload
from tests.ingest.test_native_api import vote
from tests.serving.test_create_pair import pair_request

NATIVE = vote(pair_id="lean-native-1")
PAIR = pair_request(pairId="lean-pair-1", prefix="def area(r):\n    return ", suffix="\n")
EDIT_PAIR = {
    "pairId": "lean-edit-pair-1",
    "userId": "vscode-machine-id",
    "prefix": "x = 1\n",
    "suffix": "",
    "codeToEdit": "print(0)\n",
    "userInput": "use a loop",
    "language": "python",
    "privacy": "Private",
}
# route -> (method, a valid body)
ROUTES = {
    "/add_completion_outcome": ("PUT", outcome_payload(pairId="lean-ext-1")),
    "/add_edit_outcome": ("PUT", edit_payload(0)),
    "/add_single_outcome": ("PUT", {**completion_item(0, "codestral-2405"), "version": "0.2.2"}),
    "/add_completion": ("PUT", completion_item(0, "gpt-4o-2024-08-06")),
    "/api/v1/battles": ("POST", NATIVE),
    "/create_pair": ("POST", PAIR),
    "/create_edit_pair": ("POST", EDIT_PAIR),
}
FIXED_NOW = 1_800_000_017.25  # the throttles' clock, so Retry-After is the same both ways


@dataclasses.dataclass
class Req:
    method: str
    path: str
    body: bytes = b""
    content_type: str | None = "application/json"
    query: str = ""
    headers: dict = dataclasses.field(default_factory=dict)  # WSGI environ keys
    lean: bool = True  # whether the lean dispatch should take it

    def environ(self) -> dict:
        env = {
            "REQUEST_METHOD": self.method,
            "PATH_INFO": self.path,
            "SCRIPT_NAME": "",
            "QUERY_STRING": self.query,
            "SERVER_NAME": "testserver",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "198.51.100.20",
            "HTTP_HOST": "testserver",
            "CONTENT_LENGTH": str(len(self.body)),
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(self.body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
        if self.content_type is not None:
            env["CONTENT_TYPE"] = self.content_type
        env.update(self.headers)
        return env


def req(path: str, body=None, **kw) -> Req:
    method, valid = ROUTES.get("/" + path.lstrip("/"), ("PUT", {}))
    data = valid if body is None else body
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return Req(kw.pop("method", method), path, raw, **kw)


def _vary_without_cookie(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out = []
    for name, value in headers:
        if name.lower() == "vary":
            value = ", ".join(v for v in (t.strip() for t in value.split(",")) if v != "Cookie")
            if not value:
                continue
        out.append((name, value))
    return sorted(out)


def _body(raw: bytes):
    try:
        data = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(data, dict):
        data.pop("battle_id", None)  # an id from the sequence, which a rollback does not reset
    return data


def _stored() -> dict:
    pair_of = dict(Battle.objects.values_list("id", "pair_id"))
    volatile = {"id", "received_at"}

    def rows(model, **rename):
        out = []
        for row in model.objects.values():
            row = {k: v for k, v in row.items() if k not in volatile}
            for key, mapping in rename.items():
                row[key] = mapping.get(row[key])
            out.append(row)
        return sorted(out, key=repr)

    return {
        "battles": rows(Battle),
        "code": rows(CodeContext, battle_id=pair_of),
        "completions": rows(CompletionLog),
        "completion_code": rows(CompletionCode),
        "single": rows(SingleOutcome),
        "clients": sorted(ApiClient.objects.values_list("name", "request_count")),
        "tallies": sorted(auth._pending.items()),
    }


def _metrics() -> dict:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for counter in (VOTES, PAIRS)
        for s in counter.collect()[0].samples
        if s.name.endswith("_total")
    }


class Spy:
    """Which way each request went: "full" stack, "lean" view, or lean delegating to "drf"."""

    def __init__(self, dispatch: MachineRouteDispatch) -> None:
        self.ways: list[str] = []
        for match in dispatch.lean.matches.values():
            match.func.drf_view = self._marking("drf", match.func.drf_view)
        dispatch.lean = self._marking("lean", dispatch.lean)

    def _marking(self, way: str, call):
        def marked(*args):
            self.ways[-1] = way
            return call(*args)

        return marked


def serve(app, r: Req, spy: Spy | None = None):
    got = {}

    def start_response(status, headers, exc_info=None):
        got["status"], got["headers"] = status, headers

    if spy is not None:
        spy.ways.append("full")
    response = app(r.environ(), start_response)
    try:
        raw = b"".join(response)
    finally:
        response.close()
    return got["status"], _vary_without_cookie(got["headers"]), _body(raw)


@pytest.fixture
def wsgi_requests():
    # As Django's test client does: the test's transaction must outlive each request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def fake_pairs(monkeypatch):
    """Pair services that answer from the request alone (the views are what is compared)."""

    def echo(kind):
        def serve_pair(*, request, rng=None):
            connection.ensure_connection()  # as the real service, which reads the database
            if request.prefix.startswith("unavailable"):
                raise PairUnavailable("Fewer than two servable models.")
            echoed = {k: v for k, v in dataclasses.asdict(request).items() if k != "pair_id"}
            echoed["model_tags"] = sorted(echoed["model_tags"])
            return {"kind": kind, "request": echoed}

        return serve_pair

    monkeypatch.setattr(serving_services, "create_pair", echo("pair"))
    monkeypatch.setattr(serving_services, "create_edit_pair", echo("edit"))


@pytest.fixture
def compare(db, models, wsgi_requests, fake_pairs, monkeypatch):
    monkeypatch.setattr(throttles, "time", SimpleNamespace(time=lambda: FIXED_NOW))

    def run_both(requests: list[Req], *, isolated: bool = True, prime=None) -> list:
        # Built here, after the test's settings: middleware reads some of them when built.
        dispatch = MachineRouteDispatch(WSGIHandler())
        spy = Spy(dispatch)
        runs = []
        for app, way in ((dispatch.full, None), (dispatch, spy)):
            cache.clear()  # throttle windows
            throttles.local_windows.clear()
            hotcache.clear()
            auth._pending.clear()
            auth._flushed_at.clear()
            auth._clients.clear()
            if prime is not None:
                prime()
            before = _metrics()
            if isolated:
                with transaction.atomic():
                    answers = [serve(app, r, way) for r in requests]
                    stored = _stored()
                    transaction.set_rollback(True)
            else:
                answers = [serve(app, r, way) for r in requests]
                stored = None
            after = _metrics()
            delta = {k: v - before.get(k, 0.0) for k, v in after.items() if v != before.get(k)}
            runs.append((answers, stored, delta))
        (full, full_stored, full_metrics), (lean, lean_stored, lean_metrics) = runs
        for r, a, b, way in zip(requests, full, lean, spy.ways, strict=True):
            assert a == b, (r.method, r.path, r.query, r.headers, r.body[:200], a, b)
            assert (way != "full") == r.lean, (r.method, r.path, r.headers, way)
        assert lean_stored == full_stored
        assert lean_metrics == full_metrics
        return list(zip(full, spy.ways, strict=True))

    return run_both


def _mutations(body: dict) -> list:
    """Invalid variants of a valid body: each field removed, retyped, or holding hostile text."""
    out = []
    for key in list(body):
        removed = copy.deepcopy(body)
        del removed[key]
        out.append(removed)
        for value in (None, 12, "x\x00y", "\ud800", [], {"a": 1}, "-" * 300):
            changed = copy.deepcopy(body)
            changed[key] = value
            out.append(changed)
    return out


ODD_BODIES = [
    b"",
    b"{bad",
    b"[]",
    b'"text"',
    b"1",
    b"null",
    b'{"a": NaN}',
    b'{"a": Infinity}',
    b"\xef\xbb\xbf{}",
    b'{"userId": "caf\xe9"}',
    b'{"userId": "\xf0\x9f\x98"}',
    b"[" * 40 + b"]" * 40,
    b'{"a": ' * 40 + b"1" + b"}" * 40,
]


@pytest.mark.parametrize("path", list(ROUTES))
def test_valid_replayed_and_conflicting_requests(compare, path):
    _method, valid = ROUTES[path]
    conflicting = copy.deepcopy(valid)
    for key in ("acceptedIndex", "outcome", "latency"):
        if key in conflicting:
            conflicting[key] = {"acceptedIndex": 1, "outcome": "tie", "latency": 2.5}[key]
    # Brackets in text do not make a body deep (the lean path counts them before it walks).
    bracketed = {**valid, "note": "{[" * 40}
    requests = [req(path), req(path), req(path, conflicting), req("/" + path), req(path, bracketed)]
    ways = compare(requests)
    assert [way for _, way in ways] == ["lean"] * 5  # the common request never reaches DRF


@pytest.mark.parametrize("path", list(ROUTES))
def test_invalid_bodies(compare, path):
    _method, valid = ROUTES[path]
    requests = [req(path, body) for body in _mutations(valid)]
    requests += [req(path, body) for body in ODD_BODIES]
    compare(requests)


@pytest.mark.parametrize("path", list(ROUTES))
def test_other_methods_media_types_and_queries(compare, path):
    method, _valid = ROUTES[path]
    requests = [
        req(path, method=other, body=b"" if other in ("GET", "HEAD", "OPTIONS") else None)
        for other in (
            "GET",
            "HEAD",
            "OPTIONS",
            "DELETE",
            "PATCH",
            "POST" if method == "PUT" else "PUT",
        )
    ]
    for content_type in (
        None,
        "",
        "text/plain",
        "APPLICATION/JSON",
        "application/json; charset=utf-8",
        "application/json; charset=UTF-8",
        "application/json; charset=latin-1",
        "application/json; charset=bz2_codec",
        "application/json; version=2",
        "application/vnd.api+json",
        "*/*",
    ):
        requests.append(req(path, content_type=content_type))
    requests.append(
        req(path, body=b"userId=u&pairId=p", content_type="application/x-www-form-urlencoded")
    )
    for query in ("a=%00", "a=1", "format=json", "format=api", "format=csv"):
        requests.append(req(path, query=query))
    for accept in (
        "*/*",
        "application/json",
        "application/json; indent=4",
        "text/html",
        "image/png",
    ):
        requests.append(req(path, headers={"HTTP_ACCEPT": accept}))
    for length in ("abc", "-1", "0", str(2 * 1024 * 1024 + 1), "99999999999"):
        requests.append(req(path, headers={"CONTENT_LENGTH": length}))
    # Not lean: a browser's cookie keeps the whole stack; an unknown host is refused alike.
    requests.append(
        req(path, headers={"HTTP_COOKIE": "sessionid=abc; csrftoken=" + "a" * 32}, lean=False)
    )
    requests.append(req(path, headers={"HTTP_HOST": "evil.example"}))
    requests.append(req(path + "/", lean=False))
    requests.append(req(path + "\x00", lean=False))
    compare(requests)


@pytest.mark.parametrize("path", list(ROUTES))
def test_api_keys(compare, path, settings):
    _client, key = issue_api_key(name="lean key")
    revoked, revoked_key = issue_api_key(name="revoked")
    revoke_api_key(client=revoked)
    limited, limited_key = issue_api_key(name="limited")
    ApiClient.objects.filter(pk=limited.pk).update(rate_limit_per_minute=2)
    prefix = key.split("_")[1]
    requests = [
        req(path, headers={"HTTP_AUTHORIZATION": f"Bearer {key}"}),
        req(path, headers={"HTTP_X_API_KEY": key}),
        req(path, headers={"HTTP_AUTHORIZATION": f"bearer   {key}  "}),
        req(path, headers={"HTTP_AUTHORIZATION": "Bearer nonsense"}),
        req(path, headers={"HTTP_AUTHORIZATION": f"Bearer arena_{prefix}_wrong"}),
        req(path, headers={"HTTP_AUTHORIZATION": "Bearer arena_00000000_unknown"}),
        req(path, headers={"HTTP_AUTHORIZATION": f"Bearer {revoked_key}"}),
        req(path, headers={"HTTP_AUTHORIZATION": "Basic dXNlcjpwdw=="}),
    ]
    requests += [req(path, headers={"HTTP_X_API_KEY": limited_key}) for _ in range(4)]
    compare(requests)
    settings.ARENA_ALLOW_ANONYMOUS = False
    compare([req(path), req(path, headers={"HTTP_AUTHORIZATION": f"Bearer {key}"})])


@pytest.mark.parametrize("path", list(ROUTES))
def test_throttled_requests_get_the_same_429(compare, path, settings):
    settings.ARENA_THROTTLE_RATES = {name: "2/min" for name in settings.ARENA_THROTTLE_RATES}
    _method, valid = ROUTES[path]
    other_user = copy.deepcopy(valid)
    for key in ("userId", "user_id"):
        if key in other_user:
            other_user[key] = "someone-else"
    ways = compare([req(path)] * 3 + [req(path, other_user)] + [req(path, b"{bad")])
    statuses = [status for (status, _, _), _ in ways]
    assert statuses[2].startswith("429") and statuses[3].startswith("429"), statuses


def test_client_address_behind_a_proxy(compare, settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1/32"]
    compare(
        [
            req("/api/v1/battles", {**NATIVE, "pair_id": f"xff-{i}"}, headers=headers)
            for i, headers in enumerate(
                [
                    {"HTTP_X_FORWARDED_FOR": "203.0.113.7"},
                    {"HTTP_X_FORWARDED_FOR": "10.0.0.1, 203.0.113.8"},
                    {},
                ]
            )
        ]
    )


def test_https_settings(compare, settings):
    settings.SECURE_HSTS_SECONDS = 31_536_000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    https = {"wsgi.url_scheme": "https", "SERVER_PORT": "443"}
    compare([req(path, headers=https) for path in ROUTES])
    settings.SECURE_SSL_REDIRECT = True
    compare([req(path) for path in ROUTES] + [req(path, headers=https) for path in ROUTES])


def test_research_code_is_stored_alike_and_private_code_nowhere(compare):
    research = outcome_payload(privacy="Research", pairId="lean-research")
    private = outcome_payload(pairId="lean-private")
    for item in private["completionItems"]:
        item["prefix"] = "PRIVATE_PREFIX_TEXT\n"
        item["completion"] = "PRIVATE_COMPLETION_TEXT"
    compare([req("/add_completion_outcome", research), req("/add_completion_outcome", private)])
    dispatch = MachineRouteDispatch(WSGIHandler())
    status, _headers, _body = serve(dispatch, req("/add_completion_outcome", private))
    assert status.startswith("200")
    text = all_text_in_database()
    assert "PRIVATE_PREFIX_TEXT" not in text and "PRIVATE_COMPLETION_TEXT" not in text


def test_pair_unavailable(compare):
    compare([req("/create_pair", {**PAIR, "prefix": "unavailable"})])


def test_database_down_answers_503_alike(compare, settings):
    from catalogue.selectors import clear_catalogue_cache

    settings.ARENA_RETRY_AFTER_SECONDS = 7
    clear_catalogue_cache()

    def refuse(self):
        raise OperationalError('connection to server at "127.0.0.1", port 5432 failed')

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BaseDatabaseWrapper, "ensure_connection", refuse)
        patch.setattr(BaseDatabaseWrapper, "is_usable", lambda self: False)
        ways = compare([req(path) for path in ROUTES], isolated=False)
    assert {status for (status, _, _), _ in ways} == {"503 Service Unavailable"}


def test_database_down_while_counting_a_known_keys_use(compare, settings):
    client, key = issue_api_key(name="cached key")
    prefix = key.split("_")[1]

    def known_key():  # the key's row cached as after an earlier request; its tally is due
        auth._clients[prefix] = (time.monotonic(), client)

    def refuse(self):
        raise OperationalError("the database is gone")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BaseDatabaseWrapper, "ensure_connection", refuse)
        patch.setattr(BaseDatabaseWrapper, "is_usable", lambda self: False)
        keyed = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
        ways = compare(
            [req(path, headers=keyed) for path in ROUTES], isolated=False, prime=known_key
        )
    assert {status for (status, _, _), _ in ways} == {"503 Service Unavailable"}
    assert {way for _, way in ways} == {"lean"}


def test_the_browsable_api_is_left_to_drf(compare, monkeypatch):
    # DEBUG's renderers: a pair view may answer an HTML page, which needs DRF's Request.
    monkeypatch.setattr(
        CreatePairView, "renderer_classes", [SafeJSONRenderer, BrowsableAPIRenderer]
    )
    ways = compare([req("/create_pair"), req("/create_pair", headers={"HTTP_ACCEPT": "*/*"})])
    assert [way for _, way in ways] == ["lean", "lean"]
    dispatch = MachineRouteDispatch(WSGIHandler())
    spy = Spy(dispatch)
    status, headers, body = serve(
        dispatch, req("/create_pair", headers={"HTTP_ACCEPT": "text/html"}), spy
    )
    assert spy.ways == ["drf"] and status.startswith("200")
    assert dict(headers)["Content-Type"].startswith("text/html") and b"<html" in body


def test_the_lean_chain_is_the_sites_without_the_skipped_middleware(settings):
    assert set(settings.MIDDLEWARE) >= SKIPPED  # no stale name that would skip nothing
    assert lean_middleware() == [m for m in settings.MIDDLEWARE if m not in SKIPPED]
