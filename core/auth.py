"""API keys for machine clients: issued once, stored as a SHA-256 hash, revocable.

A key looks like `arena_<prefix>_<secret>`. The prefix finds the row; the hash of the
whole key is compared in constant time. Keys are 190+ bits of randomness, so a fast hash
is enough (no password stretching needed).

Each web process keeps the rows of the keys it has seen for `CLIENT_CACHE_SECONDS` (5 s)
and tallies their use in memory, writing the tally to the database at most once a minute
per key and process. A keyed request thus costs no query and no Redis round trip. The
price: a revocation (or a new per-key limit) takes effect at once in the process that
made it (`revoke_api_key`, saving the row) and within 5 s in every other process; a
process that stops loses at most its last minute of uncounted requests (`request_count`
is a usage indicator, not an audit log).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.db.models import F
from django.http import HttpRequest
from django.utils import timezone
from rest_framework import authentication, exceptions, permissions

from .models import ApiClient

if TYPE_CHECKING:  # DRF loads this module while rest_framework.views is half imported
    from rest_framework.request import Request
    from rest_framework.views import APIView

KEY_TAG = "arena"
USAGE_FLUSH_SECONDS = 60


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> tuple[str, str]:
    """A fresh (key, prefix) pair."""
    prefix = secrets.token_hex(4)
    return f"{KEY_TAG}_{prefix}_{secrets.token_urlsafe(32)}", prefix


def _presented_key(request: HttpRequest) -> str | None:
    header: str = request.META.get("HTTP_AUTHORIZATION", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    api_key: str | None = request.META.get("HTTP_X_API_KEY")
    return api_key or None


CLIENT_CACHE_SECONDS = 5.0
_clients: dict[str, tuple[float, ApiClient]] = {}  # key prefix -> (loaded at, row)
_pending: dict[int, int] = {}  # client pk -> requests not yet written
_flushed_at: dict[int, float] = {}  # client pk -> last write of its tally
_lock = threading.Lock()


def forget_client(prefix: str) -> None:
    """Drop a key's cached row in this process (on revocation or any change of the row)."""
    _clients.pop(prefix, None)


def _client_for(prefix: str) -> ApiClient | None:
    now = time.monotonic()
    hit = _clients.get(prefix)
    if hit is not None and now - hit[0] < CLIENT_CACHE_SECONDS:
        return hit[1]
    client = ApiClient.objects.filter(key_prefix=prefix).first()
    if client is not None:  # unknown prefixes are not remembered: no unbounded growth
        _clients[prefix] = (now, client)
    return client


def note_use(client: ApiClient) -> None:
    """Count a request; write this process's tally to the database at most once a minute."""
    now = time.monotonic()
    with _lock:
        _pending[client.pk] = _pending.get(client.pk, 0) + 1
        if now - _flushed_at.get(client.pk, float("-inf")) < USAGE_FLUSH_SECONDS:
            return
        pending = _pending.pop(client.pk)
        _flushed_at[client.pk] = now
    ApiClient.objects.filter(pk=client.pk).update(
        last_used_at=timezone.now(), request_count=F("request_count") + pending
    )


def request_client(request: Request) -> ApiClient | None:
    """The API client DRF authenticated the request as (None: anonymous or a browser)."""
    auth = request.auth
    return auth if isinstance(auth, ApiClient) else None


def presented_client(request: HttpRequest) -> ApiClient | None:
    """The active client whose key the request presents (None if it presents no key), uncounted.

    AuthenticationFailed for a malformed, unknown or revoked key.
    """
    key = _presented_key(request)
    if key is None:
        return None
    parts = key.split("_")
    if len(parts) < 3 or parts[0] != KEY_TAG:
        raise exceptions.AuthenticationFailed("Malformed API key.")
    client = _client_for(parts[1])
    if client is None or not hmac.compare_digest(client.key_hash, hash_key(key)):
        raise exceptions.AuthenticationFailed("Unknown API key.")
    if not client.is_active:
        raise exceptions.AuthenticationFailed("This API key was revoked.")
    return client


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <key>` or `X-API-Key: <key>`. A bad key is a 401, never anonymous."""

    def authenticate(self, request: Request) -> tuple[AnonymousUser, ApiClient] | None:
        client = presented_client(request)
        if client is None:
            return None
        note_use(client)
        return (AnonymousUser(), client)

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="arena"'


class HasApiKey(permissions.BasePermission):
    def has_permission(self, request: Request, view: APIView) -> bool:
        if not isinstance(request.auth, ApiClient):
            raise exceptions.NotAuthenticated(
                "This route needs an API key (Authorization: Bearer <key>); ask an admin for one."
            )
        return True


class AnonymousAllowed(permissions.BasePermission):
    """Anonymous posting is on unless ARENA_ALLOW_ANONYMOUS is false."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if not (settings.ARENA_ALLOW_ANONYMOUS or isinstance(request.auth, ApiClient)):
            raise exceptions.NotAuthenticated(
                "Anonymous posting is disabled on this server; send an API key."
            )
        return True
