"""Catalogue models: the LLMs that battle and the other keys clients use for them.

The tables were created by the leaderboard app and moved here with their names kept
(`db_table`), so no data was copied.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

model_key_validator = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$",
    "Model keys are 1-128 characters: letters, digits and . _ : / @ + - (no spaces).",
)


class Visibility(models.TextChoices):
    PUBLIC = "public", "Public (collecting votes and shown)"
    PRIVATE = "private", "Private (collecting votes, not shown)"
    HIDDEN = "hidden", "Hidden (not shown, not served)"
    RETIRED = "retired", "Retired (no longer served; history kept)"


class ModelStyle(models.TextChoices):
    FIM = "fim", "Native fill-in-the-middle"
    CHAT = "chat", "Chat model (FiM by prompting)"


class ArenaModel(models.Model):
    """One LLM in the arena, identified by the key clients send."""

    key = models.CharField(max_length=128, unique=True, validators=[model_key_validator])
    display_name = models.CharField(max_length=200)
    organization = models.CharField(max_length=200, blank=True)
    license = models.CharField(max_length=100, blank=True)
    style = models.CharField(max_length=8, choices=ModelStyle.choices, default=ModelStyle.CHAT)
    visibility = models.CharField(
        max_length=8, choices=Visibility.choices, default=Visibility.PUBLIC, db_index=True
    )
    description = models.TextField(blank=True)
    # A duplicate key merged into another model: its battles count for that model from the
    # next recompute, and new votes naming this key are stored against it. Reversible.
    merged_into = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="merged_keys"
    )
    # Facts about the model shown on its page, when known.
    release_date = models.DateField(null=True, blank=True)
    knowledge_cutoff = models.CharField(
        max_length=32, blank=True, help_text="As its maker states it, e.g. 2024-04 or “late 2023”."
    )
    # When it was retired (visibility "retired"); filled in on saving as retired if empty,
    # cleared when the model is given another visibility.
    retired_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "leaderboard_arenamodel"
        ordering = ["key"]
        verbose_name = "model"
        permissions = [("merge_arenamodel", "Can merge a model into another as an alias")]

    def __str__(self) -> str:
        return self.key

    def clean(self) -> None:
        if self.key and ModelAlias.objects.filter(key=self.key).exists():
            raise ValidationError({"key": f"'{self.key}' is already an alias of another model."})
        if self.visibility == Visibility.RETIRED and self.retired_at is None:
            self.retired_at = timezone.now()
        elif self.visibility != Visibility.RETIRED:
            self.retired_at = None

    @property
    def is_retired(self) -> bool:
        return self.visibility == Visibility.RETIRED

    @property
    def is_fim(self) -> bool:
        return self.style == ModelStyle.FIM


class ModelAlias(models.Model):
    """Another key meaning the same model (a renamed or duplicate key)."""

    key = models.CharField(max_length=128, unique=True, validators=[model_key_validator])
    model = models.ForeignKey(ArenaModel, on_delete=models.CASCADE, related_name="aliases")
    note = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "leaderboard_modelalias"
        ordering = ["key"]
        verbose_name_plural = "model aliases"

    def __str__(self) -> str:
        return f"{self.key} → {self.model.key}"

    def clean(self) -> None:
        if self.key and ArenaModel.objects.filter(key=self.key).exists():
            raise ValidationError({"key": f"'{self.key}' is already a model's own key."})
