"""`CachedCSPMiddleware` sets exactly the headers django-csp's own middleware sets.

Each case runs one response through both middlewares (same request, same settings) and
compares every header; the cached policy must follow a change of the settings.
"""

from __future__ import annotations

import pytest
from csp.middleware import CSPMiddleware
from django.http import HttpResponse
from django.test import RequestFactory

from core.middleware import CachedCSPMiddleware

REPORT_ONLY = {"DIRECTIVES": {"default-src": ["'none'"], "report-uri": "/csp-report"}}


def _through(middleware_class, *, path="/api/v1/battles", nonce=False, status=200, **attrs):
    request = RequestFactory().get(path)
    response = HttpResponse("{}", status=status)
    for name, value in attrs.items():
        setattr(response, name, value)
    middleware = middleware_class(lambda r: response)
    middleware.process_request(request)
    if nonce:
        str(request.csp_nonce)  # a template asked for it
    out = middleware.process_response(request, response)
    headers = dict(out.headers)
    if nonce:  # the nonce is random: compare the policies with it taken out
        for key in ("Content-Security-Policy", "Content-Security-Policy-Report-Only"):
            if key in headers:
                headers[key] = headers[key].replace(request._csp_nonce, "N")
    return headers, request


CASES = [
    {},
    {"path": "/admin/login/"},
    {"status": 404},
    {"status": 500},
    {"_csp_exempt": True},
    {"_csp_exempt_ro": True},
    {"_csp_update": {"img-src": ["https://example.org"]}},
    {"_csp_replace": {"script-src": ["'self'", "https://cdn.example.org"]}},
    {"_csp_config": {"default-src": ["'self'"]}},
    {"_csp_update_ro": {"img-src": ["https://example.org"]}},
    {"nonce": True},
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(map(str, c)) or "plain")
@pytest.mark.parametrize("report_only", [False, True])
@pytest.mark.parametrize("debug", [False, True])
def test_same_headers_as_django_csp(settings, case, report_only, debug):
    settings.DEBUG = debug
    if report_only:
        settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {**REPORT_ONLY}
    ours, _ = _through(CachedCSPMiddleware, **case)
    theirs, _ = _through(CSPMiddleware, **case)
    assert ours == theirs
    if not (debug and case.get("status")) and not case.get("_csp_exempt"):
        assert "Content-Security-Policy" in ours


def test_cached_policy_follows_the_settings(settings):
    before, _ = _through(CachedCSPMiddleware)
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    after, _ = _through(CachedCSPMiddleware)
    assert before["Content-Security-Policy"] != after["Content-Security-Policy"]
    assert after["Content-Security-Policy"] == "default-src 'none'"
    settings.CONTENT_SECURITY_POLICY = {
        "DIRECTIVES": {"default-src": ["'self'"]},
        "EXCLUDE_URL_PREFIXES": ["/api/"],
    }
    excluded, _ = _through(CachedCSPMiddleware)
    assert "Content-Security-Policy" not in excluded


def test_a_nonce_after_the_header_is_an_error():
    _, request = _through(CachedCSPMiddleware)
    with pytest.raises(Exception, match="after the CSP header has been written"):
        str(request.csp_nonce)
