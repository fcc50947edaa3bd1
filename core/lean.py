"""A REST framework view's common request, answered without DRF's per-request machinery.

The machine routes (votes, pair requests) get one kind of request almost always: a JSON
object in UTF-8, no cookie, anonymous or with an API key. For that request DRF's dispatch
spends ~0.1 ms of CPU beside the view's own work -- wrapping the request, picking a parser
by media type, reading the body through a codec stream, asking both authenticators,
building each policy -- about a tenth of a vote. `LeanView` serves it with the same view
class, but does those steps directly:

1. Before anything with a side effect, it decides whether the request is that common kind:
   the view's one write method, `application/json` in UTF-8, a body that parses as a JSON
   object within the depth limit (as `core.parsers.SafeJSONParser` parses it), a key that
   is valid or absent, the view's content negotiation choosing JSON, permissions passing.
   Anything else goes to the DRF view itself, untouched: malformed bodies, other methods,
   bad keys, refused anonymous posting, odd `Accept` headers, the browsable API all get
   DRF's own answers.
2. Then it does what `APIView.dispatch` does after those checks, with the view's own
   methods: the key's use is counted, the view's throttles (`check_throttles`), the
   handler, `handle_exception` for any error on the way (429, 400, 409, 503: the project's
   exception handler), `finalize_response` (the `Allow` header, the view's metrics). The
   response is DRF's `Response`, rendered by Django as any other.

The handler gets a `LeanRequest` instead of DRF's `Request`: the parsed `data`, the `auth`
client, the negotiated renderer, and, like DRF's, every other attribute from Django's
request. tests/ingest/test_lean_routes.py checks that both ways answer alike.
"""

from __future__ import annotations

import codecs
import json as std_json
from functools import lru_cache

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from rest_framework.authentication import SessionAuthentication
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.utils import json

from .auth import ApiKeyAuthentication, note_use, presented_client
from .parsers import SafeJSONParser, depth_exceeds


class LeanRequest:
    """What a handler, a throttle or a permission reads of DRF's `Request`."""

    def __init__(self, request: HttpRequest, data: dict, auth) -> None:
        self._request = request
        self.data = data
        self.auth = auth
        self.user = AnonymousUser()  # what API keys and no authentication both give
        self.accepted_renderer = None
        self.accepted_media_type: str | None = None

    @property
    def query_params(self):
        return self._request.GET

    # Called by DRF's handle_exception with DEBUG on, before an uncaught error is re-raised.
    force_plaintext_errors = Request.force_plaintext_errors

    def __getattr__(self, name: str):
        # As DRF's Request: anything else is the Django request's.
        return getattr(self._request, name)


# DRF's JSON parser reads with json.load(..., parse_constant=strict_constant); one decoder
# with the same options, made once (json.loads makes a new one per call when given options).
_DECODER = std_json.JSONDecoder(
    parse_constant=json.strict_constant if SafeJSONParser.strict else None
)


@lru_cache(maxsize=16)
def _is_utf8(charset: str) -> bool:
    try:
        return codecs.lookup(charset).name == "utf-8"
    except LookupError:
        return False


def json_object_body(request: HttpRequest) -> dict | None:
    """The body as DRF's JSON parser would read it, if it is a JSON object; else None.

    None as well whenever DRF's reading could differ: another media type or charset, a
    body missing or over Django's memory limit, bytes that are not strict UTF-8, or
    anything DRF's parser refuses (the DRF view then answers with its own error).
    """
    if request.content_type != "application/json":
        return None
    if not _is_utf8(request.encoding or settings.DEFAULT_CHARSET):
        return None
    length = request.META.get("CONTENT_LENGTH") or ""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if not length.isdigit() or int(length) == 0 or (limit is not None and int(length) > limit):
        return None
    body = request.body
    try:
        data = _DECODER.decode(body.decode())
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    if not isinstance(data, dict):
        return None
    # No deeper than it has brackets: most bodies are cleared by that count alone.
    depth = settings.ARENA_MAX_JSON_DEPTH
    if body.count(b"{") + body.count(b"[") > depth and depth_exceeds(data, depth):
        return None
    return data


class LeanView:
    """A Django view for `drf_view` (an `APIView.as_view()`) that serves its common request."""

    csrf_exempt = True  # as every DRF view

    def __init__(self, drf_view) -> None:
        self.drf_view = drf_view
        self.view_class = view_class = drf_view.cls
        self.initkwargs = drf_view.initkwargs
        methods = [name for name in ("post", "put") if hasattr(view_class, name)]
        # What step 1 of the module docstring vouches for; another view would need more.
        if (
            len(methods) != 1
            or list(view_class.parser_classes) != [SafeJSONParser]
            or not set(view_class.authentication_classes)
            <= {ApiKeyAuthentication, SessionAuthentication}
        ):
            raise ImproperlyConfigured(f"{view_class.__name__} is not a view LeanView can serve.")
        self.method = methods[0]
        self.headers = view_class(**self.initkwargs).default_response_headers

    def __call__(self, request: HttpRequest):
        data = json_object_body(request) if request.method == self.method.upper() else None
        if data is None:
            return self.drf_view(request)
        try:
            # SessionAuthentication finds no session user without the session middleware
            # (the lean handler has none; only cookie-less requests come here).
            client = presented_client(request)
        except Exception:  # a bad key, or the key's row not readable: DRF answers that
            return self.drf_view(request)
        view = self.view_class(**self.initkwargs)
        lean = LeanRequest(request, data, client)
        view.request, view.args, view.kwargs = lean, (), {}
        view.format_kwarg = None
        view.headers = dict(self.headers)
        try:
            lean.accepted_renderer, lean.accepted_media_type = view.perform_content_negotiation(
                lean
            )
            # JSON is rendered from the data alone; the browsable API (DEBUG) needs DRF's
            # Request and the full middleware.
            permitted = isinstance(lean.accepted_renderer, JSONRenderer) and all(
                p.has_permission(lean, view) for p in view.get_permissions()
            )
        except Exception:
            permitted = False
        if not permitted:
            return self.drf_view(request)
        # From here on as APIView.dispatch once authentication and permissions passed.
        try:
            if client is not None:
                note_use(client)  # may write the tally: a database error is answered as DRF's
            view.check_throttles(lean)
            response = getattr(view, self.method)(lean)
        except Exception as exc:
            response = view.handle_exception(exc)
        return view.finalize_response(lean, response)
