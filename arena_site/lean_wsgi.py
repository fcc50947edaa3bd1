"""The WSGI application: the extensions' machine routes through a lean Django handler.

Votes and pair requests from editor extensions are most of the site's requests, and they
carry no cookie. For such a request the session, CSRF, authentication, messages, axes and
WhiteNoise middleware have nothing to do (no session or CSRF cookie to read, a view that is
CSRF-exempt, no login that axes could lock out, no static file at these paths), yet running
them and resolving the path through the whole URL map was a tenth of a vote's CPU (issue 18).

`MachineRouteDispatch` (the site's `application`, arena_site/wsgi.py) sends a request for
one of `LEAN_ROUTES` that carries no `Cookie` header to `LeanHandler`: Django's own WSGI
handler (request and response objects, signals, exception handling), whose middleware
chain is the site's `MIDDLEWARE` in its order without `SKIPPED`, whose URL resolution is a
dict lookup of the routes' matches, and whose views are the routes' DRF views behind
`core.lean.LeanView`. Every other request, including any request to these routes with a
cookie (a browser: its session and CSRF cookies keep their full treatment), goes to
Django's handler unchanged.

One header differs, by design: Django's session middleware adds `Vary: Cookie` to answers
whose view looked for a session user (DRF's session authenticator does, on the vote
routes), and a lean answer, which had no cookie to vary on, does not carry it. Votes and
pair requests are not cacheable, so no cache ever used it. Everything else -- status,
body, the security headers, CSP, throttling, size limits, the 503 when the database is
down, metrics -- is the same; tests/ingest/test_lean_routes.py compares both handlers'
answers to the same requests.
"""

from __future__ import annotations

from collections.abc import Callable
from wsgiref.types import WSGIApplication

from django.conf import settings
from django.core.handlers.exception import convert_exception_to_response
from django.core.handlers.wsgi import WSGIHandler
from django.urls import ResolverMatch, get_resolver, reverse
from django.utils.module_loading import import_string

from core.lean import LeanView

# URL names of the machine routes: the extension's votes, completion logs and pair requests,
# and the native single vote.
LEAN_ROUTES = (
    "ext-completion-outcome",
    "ext-edit-outcome",
    "ext-single-outcome",
    "ext-add-completion",
    "ext-create-pair",
    "ext-create-edit-pair",
    "api-battles",
)

# What a cookie-less request to those routes does not need (the module docstring says why).
SKIPPED = frozenset(
    {
        "whitenoise.middleware.WhiteNoiseMiddleware",
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.csrf.CsrfViewMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
        "django.contrib.messages.middleware.MessageMiddleware",
        "axes.middleware.AxesMiddleware",
    }
)


def lean_middleware() -> list[str]:
    """The site's middleware, in its order, less `SKIPPED`."""
    return [path for path in settings.MIDDLEWARE if path not in SKIPPED]


class LeanHandler(WSGIHandler):
    """Django's WSGI handler with the lean middleware chain, for `LEAN_ROUTES` only."""

    def __init__(self) -> None:
        super().__init__()
        resolver = get_resolver()
        # The URL map's own matches (each resolve() is a new object), found once, with their
        # DRF views served through LeanView.
        self.matches: dict[str, ResolverMatch] = {}
        for path in map(reverse, LEAN_ROUTES):
            match = self.matches[path] = resolver.resolve(path)
            match.func = LeanView(match.func)

    def load_middleware(self, is_async: bool = False) -> None:
        # BaseHandler.load_middleware for a list of our own: every middleware here is
        # synchronous, so no adapting between sync and async is needed.
        self._view_middleware: list[Callable] = []
        self._template_response_middleware: list[Callable] = []
        self._exception_middleware: list[Callable] = []
        # _get_response: BaseHandler's resolve-and-call-the-view step, the chain's core.
        handler = convert_exception_to_response(self._get_response)  # type: ignore[attr-defined]
        for path in reversed(lean_middleware()):
            middleware = import_string(path)(handler)
            if hasattr(middleware, "process_view"):
                self._view_middleware.insert(0, middleware.process_view)
            if hasattr(middleware, "process_template_response"):
                self._template_response_middleware.append(middleware.process_template_response)
            if hasattr(middleware, "process_exception"):
                self._exception_middleware.append(middleware.process_exception)
            handler = convert_exception_to_response(middleware)
        self._middleware_chain = handler

    def resolve_request(self, request):
        match = self.matches.get(request.path_info)
        if match is None:  # not ours after all: the URL map decides
            return super().resolve_request(request)
        request.resolver_match = match
        return match


class MachineRouteDispatch:
    """The site's WSGI application: cookie-less requests for `LEAN_ROUTES` go to `lean`."""

    def __init__(self, full: WSGIApplication) -> None:
        self.full = full
        self.lean = lean = LeanHandler()
        # `//route` is `/route` to CollapseLeadingSlashesMiddleware, which both chains run.
        self.names = frozenset(path.lstrip("/") for path in lean.matches)

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if "HTTP_COOKIE" not in environ and path.startswith("/") and path.lstrip("/") in self.names:
            return self.lean(environ, start_response)
        return self.full(environ, start_response)
