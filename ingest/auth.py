"""API keys for machine clients: issued once, stored as a SHA-256 hash, revocable.

A key looks like `arena_<prefix>_<secret>`. The prefix finds the row; the hash of the
whole key is compared in constant time. Keys are 190+ bits of randomness, so a fast hash
is enough (no password stretching needed).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache
from django.db.models import F
from django.utils import timezone
from rest_framework import authentication, exceptions, permissions

from .models import ApiClient

KEY_TAG = "arena"
USAGE_FLUSH_SECONDS = 60


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> tuple[str, str]:
    """A fresh (key, prefix) pair."""
    prefix = secrets.token_hex(4)
    return f"{KEY_TAG}_{prefix}_{secrets.token_urlsafe(32)}", prefix


def _presented_key(request) -> str | None:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.META.get("HTTP_X_API_KEY") or None


def _note_use(client: ApiClient) -> None:
    """Count a request; write the tally to the database at most once a minute per key."""
    counter = f"apikey:n:{client.pk}"
    if not cache.add(counter, 1, None):
        try:
            cache.incr(counter)
        except ValueError:
            cache.add(counter, 1, None)
    if cache.add(f"apikey:flush:{client.pk}", 1, USAGE_FLUSH_SECONDS):
        pending = cache.get(counter) or 0
        if pending:
            cache.decr(counter, pending)
        ApiClient.objects.filter(pk=client.pk).update(
            last_used_at=timezone.now(), request_count=F("request_count") + pending
        )


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <key>` or `X-API-Key: <key>`. A bad key is a 401, never anonymous."""

    def authenticate(self, request):
        key = _presented_key(request)
        if key is None:
            return None
        parts = key.split("_")
        if len(parts) < 3 or parts[0] != KEY_TAG:
            raise exceptions.AuthenticationFailed("Malformed API key.")
        client = ApiClient.objects.filter(key_prefix=parts[1]).first()
        if client is None or not hmac.compare_digest(client.key_hash, hash_key(key)):
            raise exceptions.AuthenticationFailed("Unknown API key.")
        if not client.is_active:
            raise exceptions.AuthenticationFailed("This API key was revoked.")
        _note_use(client)
        return (AnonymousUser(), client)

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="arena"'


class HasApiKey(permissions.BasePermission):
    def has_permission(self, request, view) -> bool:
        if not isinstance(request.auth, ApiClient):
            raise exceptions.NotAuthenticated(
                "This route needs an API key (Authorization: Bearer <key>); ask an admin for one."
            )
        return True


class AnonymousAllowed(permissions.BasePermission):
    """Anonymous posting is on unless ARENA_ALLOW_ANONYMOUS is false."""

    def has_permission(self, request, view) -> bool:
        if not (settings.ARENA_ALLOW_ANONYMOUS or isinstance(request.auth, ApiClient)):
            raise exceptions.NotAuthenticated(
                "Anonymous posting is disabled on this server; send an API key."
            )
        return True
