"""Error reports to Sentry (when SENTRY_DSN is set) with code and user ids scrubbed out.

Code of a user whose privacy is not `Research` must never be written anywhere, and a
Sentry event is a write. So every event passes `scrub_event` before it leaves the process:

- in the request body (and in `extra`, `contexts`, breadcrumbs), a code field (`prefix`,
  `completion`, `codeToEdit`, ... -- `CODE_FIELDS`, matched without regard to case, `_` or
  `-`) is replaced by "[scrubbed]" unless the object it sits in, or the nearest enclosing
  one that says, has `privacy` = `Research`; with no `privacy` anywhere it is scrubbed;
- user ids, user names, account metadata and passwords are scrubbed whatever the privacy
  (the server stores user ids only as an HMAC);
- a body that is not JSON is dropped whole (its privacy cannot be read);
- stack frames carry no local variables: a variable holding code may have any name, so no
  key rule could recognise it.

What the SDK collects is cut down first (`data_collection`): no user identity or cookies,
only incoming request bodies (never the bodies of provider calls, which carry prompts), no
SQL parameters, no queue payloads, no AI inputs or outputs. The project's log messages
never contain code.
"""

from __future__ import annotations

import json
import re
from typing import Any

SCRUBBED = "[scrubbed]"
RESEARCH = "Research"


def _norm(key: str) -> str:
    return re.sub(r"[_\-]", "", key).lower()


# Every code field of the ingest and serving serializers and of CodeContext, and the
# provider request fields that carry code (tests/arena_site/test_sentry.py checks the list
# covers the serializers).
CODE_FIELDS = frozenset(
    _norm(k)
    for k in (
        "prompt", "prefix", "full_prefix", "suffix", "full_suffix", "completion",
        "raw_completion", "completion_a", "completion_b", "response", "raw_response",
        "code_to_edit", "user_input", "repo_url", "messages", "middle",
    )
)  # fmt: skip
PERSONAL_FIELDS = frozenset(
    _norm(k) for k in ("user_id", "username", "user_name", "metadata", "password", "user_hash")
)


def _scrub(value: Any, research: bool) -> Any:
    if isinstance(value, dict):
        privacy = value.get("privacy")
        here = research if privacy is None else privacy == RESEARCH
        out = {}
        for key, item in value.items():
            name = _norm(str(key))
            if name in PERSONAL_FIELDS or (name in CODE_FIELDS and not here):
                out[key] = SCRUBBED if item not in (None, "") else item
            else:
                out[key] = _scrub(item, here)
        return out
    if isinstance(value, list | tuple):
        return [_scrub(item, research) for item in value]
    return value


def _body(data: Any) -> Any:
    if isinstance(data, str | bytes):
        try:
            data = json.loads(data)
        except ValueError:
            return SCRUBBED if data else data
    if isinstance(data, dict | list):
        return _scrub(data, research=False)
    return data


def scrub_event(event: dict[str, Any], _hint: dict[str, Any] | None = None) -> dict[str, Any]:
    """Sentry's `before_send`: the event with code (outside Research) and user ids removed."""
    request = event.get("request")
    if isinstance(request, dict) and "data" in request:
        request["data"] = _body(request["data"])
    for key in ("extra", "contexts"):
        if isinstance(event.get(key), dict):
            event[key] = _scrub(event[key], research=False)
    crumbs = event.get("breadcrumbs")
    values = crumbs.get("values") if isinstance(crumbs, dict) else crumbs
    if isinstance(values, list):
        for crumb in values:
            if isinstance(crumb, dict):
                scrub_breadcrumb(crumb)
    for exc in (event.get("exception") or {}).get("values") or []:
        for frame in (exc.get("stacktrace") or {}).get("frames") or []:
            frame.pop("vars", None)
    return event


def scrub_breadcrumb(crumb: dict[str, Any], _hint: dict[str, Any] | None = None) -> dict[str, Any]:
    if isinstance(crumb.get("data"), dict):
        crumb["data"] = _scrub(crumb["data"], research=False)
    return crumb


def init_sentry(
    *, dsn: str, environment: str, traces_sample_rate: float, transport: Any = None
) -> None:
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        data_collection={
            "user_info": False,
            "cookies": {"mode": "off"},
            "http_bodies": ["incoming_request"],
            "database_query_data": False,
            "queues": False,
            "gen_ai": {"inputs": False, "outputs": False},
            "stack_frame_variables": False,
        },
        before_send=scrub_event,  # type: ignore[arg-type]
        before_send_transaction=scrub_event,  # type: ignore[arg-type]
        before_breadcrumb=scrub_breadcrumb,
        traces_sample_rate=traces_sample_rate,
        transport=transport,
    )
