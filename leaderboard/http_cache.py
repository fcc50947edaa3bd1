"""HTTP caching of the public reads: ETag, Last-Modified, Cache-Control and the 304 answer.

Everything a board page or read-API response shows comes from the published snapshot (the
correlations also from results computed after it, which `version` covers), so the snapshot
id plus the full path, query string included, identifies the body: the same identity
`page_cache` keys rendered pages by. The ETag is derived from it, Last-Modified is the
snapshot's publication time, and a new snapshot changes both.

A conditional request that still matches is answered 304 before the view runs: it costs
the published id and its publication time, both memoised per process (core.hotcache), and
renders nothing. Only a 200 gets the public headers; errors, redirects and other methods
pass through untouched. With no snapshot published yet there is nothing to validate
against: the 200 carries no ETag or Last-Modified and `Cache-Control: no-cache`, so the
first publication shows at once.

nginx's gzip turns the ETag weak (W/"..."); Django's If-None-Match check compares weakly,
so a weakened tag still matches. Behind a CDN or nginx's proxy_cache (docs/scaling.md)
`public, max-age, stale-while-revalidate` lets the cache answer most reads by itself.
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.utils.cache import get_conditional_response, patch_cache_control
from django.utils.http import http_date, quote_etag

from . import selectors


@dataclass(frozen=True)
class Validators:
    etag: str  # quoted, strong
    last_modified: int  # seconds since the epoch


def read_validators(
    request: HttpRequest,
    *,
    version: Callable[[HttpRequest], str] | None = None,
    modified: Callable[[HttpRequest], dt.datetime | None] | None = None,
) -> Validators | None:
    """The validators of the current answer to `request`; None while nothing is published."""
    sid = selectors.published_snapshot_id()
    if sid is None:
        return None
    published = selectors.snapshot_published_at(snapshot_id=sid)
    if published is None:  # pruned or not yet visible: do not invent a date
        return None
    extra = f":{version(request)}" if version is not None else ""
    variant = hashlib.sha256(f"{extra}:{request.get_full_path()}".encode()).hexdigest()[:20]
    later = modified(request) if modified is not None else None
    at = max(published, later) if later is not None else published
    return Validators(
        etag=quote_etag(f"s{sid}-{variant}"),
        last_modified=calendar.timegm(at.utctimetuple()),
    )


def _mark(response: HttpResponse, validators: Validators | None) -> HttpResponse:
    if validators is None:
        patch_cache_control(response, no_cache=True)
        return response
    response.headers["ETag"] = validators.etag
    response.headers["Last-Modified"] = http_date(validators.last_modified)
    swr = settings.ARENA_READ_STALE_WHILE_REVALIDATE
    patch_cache_control(
        response,
        public=True,
        max_age=settings.ARENA_READ_MAX_AGE,
        **({"stale_while_revalidate": swr} if swr > 0 else {}),
    )
    return response


def public_read(
    view=None,
    *,
    version: Callable[[HttpRequest], str] | None = None,
    modified: Callable[[HttpRequest], dt.datetime | None] | None = None,
):
    """Give a public read view's 200s the cache headers and answer revalidations with 304.

    `version(request)` is folded into the ETag for data that changes after the snapshot is
    published; `modified(request)` is when that data last changed (Last-Modified is the
    later of it and the publication). For a DRF method use `method_decorator(public_read)`:
    it runs after authentication and the throttles, so a 304 still counts as a read.
    """

    def decorate(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if request.method not in ("GET", "HEAD"):
                return view(request, *args, **kwargs)
            before = read_validators(request, version=version, modified=modified)
            # `*` asks whether the resource exists at all, which only the view knows.
            if before is not None and request.headers.get("If-None-Match", "").strip() != "*":
                answer = get_conditional_response(
                    request, etag=before.etag, last_modified=before.last_modified
                )
                if isinstance(answer, HttpResponseNotModified):
                    return _mark(answer, before)
                if answer is not None:  # 412 Precondition Failed: an error, not cacheable
                    return answer
            response = view(request, *args, **kwargs)
            if response.status_code != 200:
                return response
            # A snapshot published while the view ran: the body may be of either one, so
            # it gets no validator that could pin the older body to the newer snapshot.
            after = read_validators(request, version=version, modified=modified)
            if after != before:
                patch_cache_control(response, no_cache=True)
                return response
            return _mark(response, after)

        return wrapper

    return decorate(view) if view is not None else decorate
