"""Writes of core: issue and revoke API keys."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.utils import timezone

from .auth import forget_client, hash_key, new_key
from .models import ApiClient


def issue_api_key(
    *,
    name: str,
    created_by: User | None = None,
    rate_limit_per_minute: int | None = None,
) -> tuple[ApiClient, str]:
    """Create a client and return it with its key. The key is not stored and cannot be shown again."""
    key, prefix = new_key()
    client = ApiClient.objects.create(
        name=name,
        key_prefix=prefix,
        key_hash=hash_key(key),
        created_by=created_by,
        rate_limit_per_minute=rate_limit_per_minute,
    )
    return client, key


def revoke_api_key(*, client: ApiClient) -> None:
    """Revoke a key: at once in this process, within auth.CLIENT_CACHE_SECONDS in the others."""
    ApiClient.objects.filter(pk=client.pk, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    forget_client(client.key_prefix)
