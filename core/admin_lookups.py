"""Admin list pages refuse regular-expression lookups in their query string (400, not 500).

Django's admin applies any lookup on a model's own fields from the query string
(`?reason__regex=...`), and PostgreSQL evaluates the pattern only when the page's query
runs, so an invalid one (`?reason__regex=(`) was a 500 with a traceback. The admin's own
filters and search never produce these lookups; `AdminRegexLookupMiddleware` answers a
request under /admin/ that names one with a 400 saying which parameter it refused.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBadRequest
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.utils.html import escape

REFUSED = frozenset({"regex", "iregex"})


class AdminRegexLookupMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self._prefix: str | None = None

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if self._prefix is None:
            self._prefix = reverse("admin:index")
        if request.path.startswith(self._prefix) and request.GET:
            for key in request.GET:
                if key.rsplit("__", 1)[-1] in REFUSED:
                    return HttpResponseBadRequest(
                        f"{escape(key)}: regular-expression lookups are not offered here; "
                        "use the filters or the search box.",
                        content_type="text/plain; charset=utf-8",
                    )
        return self.get_response(request)
