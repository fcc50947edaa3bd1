"""Whole rendered pages cached per published snapshot (shared cache plus a per-process memo)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import wraps
from typing import Concatenate, ParamSpec, overload

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseNotAllowed

from core import hotcache

from . import selectors

P = ParamSpec("P")
View = Callable[Concatenate[HttpRequest, P], HttpResponseBase]
Version = Callable[[HttpRequest], str]


@overload
def cached_per_snapshot(view: View[P], *, version: Version | None = None) -> View[P]: ...


@overload
def cached_per_snapshot(
    view: None = None, *, version: Version | None = None
) -> Callable[[View[P]], View[P]]: ...


def cached_per_snapshot(
    view: View[P] | None = None, *, version: Version | None = None
) -> View[P] | Callable[[View[P]], View[P]]:
    """Serve the rendered page from the cache until a new snapshot is published.

    The pages carry nothing user-specific, and everything on them comes from the published
    snapshot, so its id plus the full path identifies the HTML exactly. A page that also
    shows data computed after the snapshot (correlations) passes `version(request)`, a
    string that changes whenever that data does.
    """

    def decorate(view: View[P]) -> View[P]:
        @wraps(view)
        def wrapper(request: HttpRequest, /, *args: P.args, **kwargs: P.kwargs) -> HttpResponseBase:
            if request.method not in ("GET", "HEAD"):
                return HttpResponseNotAllowed(["GET", "HEAD"])
            path = hashlib.sha256(request.get_full_path().encode()).hexdigest()[:32]
            extra = f":{version(request)}" if version is not None else ""
            key = f"lb:page:{selectors.published_snapshot_id()}{extra}:{path}"
            rendered: list[HttpResponseBase] = []

            def produce() -> bytes | None:
                body: bytes | None = cache.get(key)
                if body is None:
                    response = view(request, *args, **kwargs)
                    rendered.append(response)
                    if response.status_code != 200:
                        return None
                    body = response.content if isinstance(response, HttpResponse) else None
                    if body is None:
                        return None
                    cache.set(key, body, selectors.BOARD_TTL)
                return body

            body = hotcache.get(key, produce)
            if not isinstance(body, bytes):
                return rendered[0]
            return HttpResponse(body)

        return wrapper

    return decorate(view) if view is not None else decorate
