"""A registered contributor: a username for a pseudonymised extension user.

Only users who register get a row. The machine id is never stored: `user_hash` is the same
HMAC the battles carry. `metadata` (job title, sector, experience, coding hours) is personal
data: kept with the account only, shown to nobody, deleted with it.
"""

from __future__ import annotations

from django.db import models
from django.db.models.functions import Lower


class Contributor(models.Model):
    user_hash = models.CharField(max_length=64, unique=True)
    username = models.CharField(max_length=32)
    # Django's hasher format; empty when the user set no password (the extension sends none).
    password = models.CharField(max_length=128, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # The private link to the personal page (/me/<token>/), never derived from the machine id.
    page_token = models.CharField(max_length=32, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(Lower("username"), name="contributor_username_ci_unique")
        ]

    def __str__(self) -> str:
        return self.username
