"""A dataset release: its options, what it holds, where its files are and how it went."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from django.db import models

# A release's name is its directory in the storage and part of its URLs.
VERSION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
version_validator = RegexValidator(
    VERSION_PATTERN,
    "Letters, digits, dots, dashes and underscores, starting with a letter or digit.",
)


class DatasetRelease(models.Model):
    """One versioned release. Its files live in the "releases" storage under `version/`."""

    class Status(models.TextChoices):
        BUILDING = "building"
        READY = "ready"
        FAILED = "failed"

    class OnSecret(models.TextChoices):
        REDACT = "redact", "Keep the vote, drop its code"
        DROP = "drop", "Leave the battle out"

    version = models.CharField(max_length=40, unique=True, validators=[version_validator])
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.BUILDING)
    public = models.BooleanField(
        default=True, help_text="Listed on /data/ once ready (the files stay in the storage)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Battles received before this moment (now minus the minimum age) are in the release.
    cutoff = models.DateTimeField()
    license = models.CharField(max_length=64)
    min_age_days = models.PositiveIntegerField()
    stable_ids = models.BooleanField(
        default=False,
        help_text="Pseudonyms the same in every release with stable ids (joinable across "
        "them); off: keyed for this release alone.",
    )
    include_simulated = models.BooleanField(default=False)
    include_excluded = models.BooleanField(default=False)
    on_secret = models.CharField(max_length=8, choices=OnSecret.choices, default=OnSecret.REDACT)
    # What the build counted (battles, users, research_rows, redacted_rows, ...).
    counts = models.JSONField(default=dict, blank=True)
    # [{name, bytes, sha256, rows?}] of every file in the release, README and manifest included.
    files = models.JSONField(default=list, blank=True)
    size_bytes = models.BigIntegerField(default=0)
    # The overall board fitted on the released battles (what an import reproduces).
    board = models.JSONField(default=dict, blank=True)
    seconds = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.version

    def file(self, name: str) -> dict[str, Any] | None:
        return next((f for f in self.files if f["name"] == name), None)
