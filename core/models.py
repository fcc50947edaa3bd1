"""Tables of core: machine credentials (API clients) and the audit log of staff actions.

Both were created by other apps (ingest, moderation) and moved here with their tables kept
(`db_table`), so no data was copied.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiClient(models.Model):
    """A machine credential. Only a SHA-256 of the key is stored; the key is shown once."""

    name = models.CharField(max_length=100)
    key_prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    rate_limit_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Empty = no limit."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    request_count = models.BigIntegerField(default=0)

    class Meta:
        db_table = "ingest_apiclient"  # created by ingest; moved here without copying
        verbose_name = "API client"

    def __str__(self) -> str:
        return f"{self.name} ({self.key_prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class AuditEntry(models.Model):
    """One moderation action: who, when, what, why, and the state before and after."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_name = models.CharField(
        max_length=150, help_text="Kept if the user is deleted; 'system' for tasks."
    )
    action = models.CharField(max_length=40, db_index=True)
    target = models.CharField(max_length=300)
    reason = models.TextField(blank=True)
    affected = models.PositiveIntegerField(default=0)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "moderation_auditentry"  # created by moderation; moved here
        ordering = ["-at", "-id"]
        verbose_name = "audit entry"
        verbose_name_plural = "audit log"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor_name} {self.action} {self.target}"
