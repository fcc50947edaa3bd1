"""HTTP caching of the public reads: Django's `condition` plus public Cache-Control.

Everything a board page or read-API response shows comes from the published snapshot (the
correlations also from results computed after it, which `version` covers), so the snapshot
id plus the full path, query string included, identifies the body: the same identity
`page_cache` keys rendered pages by. The ETag is derived from it, Last-Modified is the
snapshot's publication time, and a new snapshot changes both. They are computed before the
view runs, so a body is never older than its validators.

`django.views.decorators.http.condition` answers a conditional request that still matches
with 304 before the view runs: it costs the published id and its publication time, both
memoised per process (core.hotcache). 200s and 304s then get `Cache-Control: public,
max-age, stale-while-revalidate`; errors, redirects and other methods none. With no
snapshot published yet there is nothing to validate against: the answer carries no ETag or
Last-Modified and `Cache-Control: no-cache`, so the first publication shows at once.

nginx's gzip turns the ETag weak (W/"..."); Django's If-None-Match check compares weakly,
so a weakened tag still matches. Behind a CDN or nginx's proxy_cache (docs/scaling.md) the
public headers let the cache answer most reads by itself.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
from functools import wraps
from typing import Concatenate, ParamSpec, overload

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.utils.cache import patch_cache_control
from django.views.decorators.http import condition

from . import selectors

Validators = tuple[str, dt.datetime]  # (ETag without quotes, Last-Modified)
P = ParamSpec("P")
View = Callable[Concatenate[HttpRequest, P], HttpResponseBase]
Version = Callable[[HttpRequest], str]
Modified = Callable[[HttpRequest], dt.datetime | None]
# The request attribute that hands the validators to both of `condition`'s callables.
_VALIDATORS = "read_validators"


def read_validators(
    request: HttpRequest,
    *,
    version: Version | None = None,
    modified: Modified | None = None,
) -> Validators | None:
    """The validators of the current answer to `request`; None while nothing is published."""
    if request.headers.get("If-None-Match", "").strip() == "*":
        return None  # whether the resource exists at all: only the view knows
    sid = selectors.published_snapshot_id()
    if sid is None:
        return None
    published = selectors.snapshot_published_at(snapshot_id=sid)
    if published is None:  # pruned or not yet visible: do not invent a date
        return None
    extra = f":{version(request)}" if version is not None else ""
    variant = hashlib.sha256(f"{extra}:{request.get_full_path()}".encode()).hexdigest()[:20]
    later = modified(request) if modified is not None else None
    return f"s{sid}-{variant}", max(published, later) if later is not None else published


def _validators(request: HttpRequest) -> Validators | None:
    validators: Validators | None = getattr(request, _VALIDATORS)
    return validators


def _etag(request: HttpRequest, *args: object, **kwargs: object) -> str | None:
    validators = _validators(request)
    return None if validators is None else validators[0]


def _last_modified(request: HttpRequest, *args: object, **kwargs: object) -> dt.datetime | None:
    validators = _validators(request)
    return None if validators is None else validators[1]


@overload
def public_read(
    view: View[P], *, version: Version | None = None, modified: Modified | None = None
) -> View[P]: ...


@overload
def public_read(
    view: None = None, *, version: Version | None = None, modified: Modified | None = None
) -> Callable[[View[P]], View[P]]: ...


def public_read(
    view: View[P] | None = None,
    *,
    version: Version | None = None,
    modified: Modified | None = None,
) -> View[P] | Callable[[View[P]], View[P]]:
    """Validators and a 304 by `condition`, public caching of the 200s and 304s.

    `version(request)` is folded into the ETag for data that changes after the snapshot is
    published; `modified(request)` is when that data last changed (Last-Modified is the
    later of it and the publication). For a DRF method use `method_decorator(public_read)`:
    it runs after authentication and the throttles, so a 304 still counts as a read.
    """

    def decorate(view: View[P]) -> View[P]:
        conditional = condition(etag_func=_etag, last_modified_func=_last_modified)(view)

        @wraps(view)
        def wrapper(request: HttpRequest, /, *args: P.args, **kwargs: P.kwargs) -> HttpResponseBase:
            if request.method not in ("GET", "HEAD"):
                return view(request, *args, **kwargs)
            validators = read_validators(request, version=version, modified=modified)
            setattr(request, _VALIDATORS, validators)
            response = conditional(request, *args, **kwargs)
            if response.status_code not in (200, 304):
                return response
            if validators is None:
                patch_cache_control(response, no_cache=True)
                return response
            swr = settings.ARENA_READ_STALE_WHILE_REVALIDATE
            patch_cache_control(
                response,
                public=True,
                max_age=settings.ARENA_READ_MAX_AGE,
                **({"stale_while_revalidate": swr} if swr > 0 else {}),
            )
            return response

        return wrapper

    return decorate(view) if view is not None else decorate
