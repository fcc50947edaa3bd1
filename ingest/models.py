"""Stored votes (battles), completion logs and the code kept for research.

Code (prefix, suffix, completions, edit instructions) never lives on a battle row: it
goes to `CodeContext` / `CompletionCode`, and only when the user chose `Research`.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from catalogue.models import ArenaModel
from core.models import ApiClient

# A battle's size and speed figures, stored on the row (imports and releases carry them).
SIZE_FIELDS = (
    "latency_a_ms",
    "latency_b_ms",
    "prefix_chars",
    "suffix_chars",
    "completion_a_chars",
    "completion_b_chars",
)
# The code a Research battle keeps (`CodeContext`), without where it came from.
CODE_FIELDS = ("prefix", "suffix", "completion_a", "completion_b", "code_to_edit", "user_input")


class Privacy(models.TextChoices):
    PRIVATE = "Private"
    DEBUG = "Debug"
    RESEARCH = "Research"


class Outcome(models.IntegerChoices):
    A = 0, "Model A (top) won"
    B = 1, "Model B (bottom) won"
    TIE = 2, "Tie"
    BOTH_BAD = 3, "Both bad"


class BattleKind(models.TextChoices):
    COMPLETION = "completion"
    EDIT = "edit"


class BattleSource(models.TextChoices):
    EXTENSION = "extension", "Editor extension"
    API = "api", "Native API"
    IMPORT = "import", "Imported file"
    SIMULATED = "simulated", "Simulated"
    # Another arena's published votes (LMArena's preference datasets; ingest/transfer.py).
    EXTERNAL = "external", "Another arena's release"


class Hold(models.TextChoices):
    """Why a battle is held out of the public board pending a decision (always excluded too)."""

    NONE = "", "Not held"
    # A user flagged by an anomaly rule: their recent votes wait for a moderator.
    QUARANTINE = "quarantine", "Held: flagged user, pending review"
    # A vote without an API key for a pair this server did not serve (or not with these
    # models), while pair serving is on (ingest/binding.py).
    UNVERIFIED = "unverified", "Held: not a pair this server served"


class Battle(models.Model):
    """One vote: model A was shown on top, model B at the bottom."""

    pair_id = models.CharField(max_length=128, unique=True)
    user_hash = models.CharField(max_length=64, db_index=True)
    model_a = models.ForeignKey(ArenaModel, on_delete=models.PROTECT, related_name="+")
    model_b = models.ForeignKey(ArenaModel, on_delete=models.PROTECT, related_name="+")
    outcome = models.PositiveSmallIntegerField(choices=Outcome.choices)
    kind = models.CharField(max_length=10, choices=BattleKind.choices)
    file_type = models.CharField(max_length=64, blank=True)
    language = models.CharField(max_length=32, default="other")
    privacy = models.CharField(max_length=8, choices=Privacy.choices)
    latency_a_ms = models.FloatField(null=True, blank=True)
    latency_b_ms = models.FloatField(null=True, blank=True)
    prefix_chars = models.PositiveIntegerField(null=True, blank=True)
    suffix_chars = models.PositiveIntegerField(null=True, blank=True)
    # Lengths of the two completions (A top, B bottom), stored for every vote whatever its
    # privacy: a length is not code, and the controlled board needs it. Lines are the line
    # breaks + 1. None: not known (no text sent, or a battle stored before lengths were).
    completion_a_chars = models.PositiveIntegerField(null=True, blank=True)
    completion_b_chars = models.PositiveIntegerField(null=True, blank=True)
    completion_a_lines = models.PositiveIntegerField(null=True, blank=True)
    completion_b_lines = models.PositiveIntegerField(null=True, blank=True)
    client_version = models.CharField(max_length=64, blank=True)
    # Probability with which our pair server drew this (unordered) pair, copied at ingest
    # from the pair's CompletionLog; None for pairs we did not serve (the public extension's
    # own server, imports, simulations). Read by the inverse-propensity board option.
    pair_probability = models.FloatField(null=True, blank=True)
    received_at = models.DateTimeField(default=timezone.now, db_index=True)
    source = models.CharField(max_length=10, choices=BattleSource.choices)
    client = models.ForeignKey(ApiClient, null=True, blank=True, on_delete=models.SET_NULL)
    ip_hash = models.CharField(max_length=16, blank=True)
    content_hash = models.CharField(max_length=64)
    # Keyed fingerprint of the code context (prefix, suffix), for every privacy level: not
    # code, not reversible without the key; "" without a context. Lets the fit count a
    # user's repeated identical contexts once (docs/ratings.md, "Vote rigging").
    context_hash = models.CharField(max_length=16, blank=True, default="")
    # Slice labels, computed at ingest from the context (also for Private votes).
    natural_language = models.CharField(max_length=8, default="unknown")
    context_tokens = models.PositiveIntegerField(null=True, blank=True)
    context_bucket = models.CharField(max_length=8, default="unknown")
    task_type = models.CharField(max_length=16, default="other")
    labeler_version = models.CharField(max_length=32, blank=True)
    # Moderation: exclusion is a flag, never a delete. A held battle is excluded (so every
    # count of the board leaves it out) and says why in `hold`; releasing it counts it again.
    excluded = models.BooleanField(default=False)
    excluded_reason = models.CharField(max_length=200, blank=True)
    hold = models.CharField(max_length=12, choices=Hold.choices, blank=True, default="")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(model_a=models.F("model_b")), name="battle_distinct_models"
            ),
            models.CheckConstraint(
                condition=models.Q(hold="") | models.Q(excluded=True),
                name="battle_held_is_excluded",
            ),
        ]
        indexes = [
            models.Index(fields=["source"], name="battle_source_idx"),
            # Held battles are few: counted for every board, listed for moderators.
            models.Index(fields=["hold"], condition=~models.Q(hold=""), name="battle_held_idx"),
        ]
        permissions = [("moderate_battle", "Can exclude and restore battles")]

    def __str__(self) -> str:
        return f"{self.pair_id}: {self.model_a_id} vs {self.model_b_id} → {self.outcome}"


class CodeContext(models.Model):
    """The code of a Research battle. Never written for Private or Debug votes."""

    battle = models.OneToOneField(
        Battle, on_delete=models.CASCADE, primary_key=True, related_name="code"
    )
    prefix = models.TextField(blank=True)
    suffix = models.TextField(blank=True)
    completion_a = models.TextField(blank=True)
    completion_b = models.TextField(blank=True)
    code_to_edit = models.TextField(blank=True)
    user_input = models.TextField(blank=True)
    repo_url = models.CharField(max_length=2048, blank=True)

    FIELDS = (*CODE_FIELDS, "repo_url")

    def __str__(self) -> str:
        return f"code of battle {self.battle_id}"


class CompletionLog(models.Model):
    """A completion that was shown (or served), kept for latency statistics."""

    completion_id = models.CharField(max_length=128, unique=True)
    pair_completion_id = models.CharField(max_length=128, blank=True)
    pair_id = models.CharField(max_length=128, blank=True, db_index=True)
    pair_index = models.PositiveSmallIntegerField(null=True, blank=True)
    model = models.ForeignKey(ArenaModel, on_delete=models.PROTECT, related_name="+")
    latency_ms = models.FloatField(null=True, blank=True)
    user_hash = models.CharField(max_length=64, blank=True)
    privacy = models.CharField(max_length=8, choices=Privacy.choices)
    file_type = models.CharField(max_length=64, blank=True)
    client_version = models.CharField(max_length=64, blank=True)
    served_by_us = models.BooleanField(default=False)
    succeeded = models.BooleanField(default=True)
    # Served pairs only: the probability of the shown (unordered) pair under the sampler's
    # distribution at the moment it was drawn (serving.serve); the vote copies it.
    pair_probability = models.FloatField(null=True, blank=True)
    received_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        indexes = [models.Index(fields=["model", "received_at"], name="completion_model_time_idx")]

    def __str__(self) -> str:
        return self.completion_id


class SingleOutcome(models.Model):
    """A completion accepted when only one was shown (no battle)."""

    completion_id = models.CharField(max_length=128, unique=True)
    model = models.ForeignKey(ArenaModel, on_delete=models.PROTECT, related_name="+")
    user_hash = models.CharField(max_length=64, db_index=True)
    privacy = models.CharField(max_length=8, choices=Privacy.choices)
    client_version = models.CharField(max_length=64, blank=True)
    received_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.completion_id


class CompletionCode(models.Model):
    """Prompt and completion text of a logged completion. Research privacy only."""

    completion_id = models.CharField(max_length=128, unique=True)
    prompt = models.TextField(blank=True)
    completion = models.TextField(blank=True)

    def __str__(self) -> str:
        return self.completion_id
