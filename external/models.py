"""External leaderboards, their scores per model, the alias table, and stored correlations.

An imported file becomes one ``ExternalBoard`` per (source, metric, release), e.g.
"LiveBench coding, 2024-08-31", holding one ``ExternalScore`` per model *in the source's
own spelling*. ``ExternalAlias`` maps a source's spelling to a catalogue model; a score's
``model`` is that mapping resolved (kept in sync by ``services.resolve_scores``), so adding
an alias in the admin matches already imported scores without a re-import.
"""

from __future__ import annotations

from django.db import models

from catalogue.models import ArenaModel
from leaderboard.models import Snapshot


class SourceKind(models.TextChoices):
    STATIC = "static", "Static benchmark"
    PREFERENCE = "preference", "Human preference"
    JUDGE = "judge", "LLM judge"


class ExternalSource(models.Model):
    """One external leaderboard (LiveBench, Chatbot Arena, ...)."""

    key = models.SlugField(max_length=40, unique=True)
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=12, choices=SourceKind.choices)
    url = models.URLField(blank=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ExternalBoard(models.Model):
    """The scores of one metric of one release of a source (one import)."""

    source = models.ForeignKey(ExternalSource, on_delete=models.CASCADE, related_name="boards")
    metric = models.CharField(max_length=60)
    release = models.CharField(
        max_length=80, blank=True, help_text="Release date, subset or window of the file."
    )
    label = models.CharField(max_length=200)
    higher_is_better = models.BooleanField(default=True)
    active = models.BooleanField(
        default=True, help_text="Used for correlations (untick to keep the scores but skip it)."
    )
    file_name = models.CharField(max_length=300, blank=True)
    file_sha256 = models.CharField(max_length=64, blank=True)
    details = models.JSONField(default=dict, blank=True)
    imported_at = models.DateTimeField()

    class Meta:
        ordering = ["source__name", "metric", "release"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "metric", "release"], name="external_board_unique"
            )
        ]

    def __str__(self) -> str:
        return self.label


class ExternalAlias(models.Model):
    """A source's spelling of a model name, mapped to a catalogue model (or to none)."""

    source = models.ForeignKey(ExternalSource, on_delete=models.CASCADE, related_name="aliases")
    name = models.CharField(max_length=200, help_text="Exactly as the source spells it.")
    model = models.ForeignKey(
        ArenaModel,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="external_aliases",
        help_text="Empty: this name is known and deliberately not matched to any model.",
    )
    note = models.CharField(max_length=400, blank=True)
    caveat = models.BooleanField(
        default=False,
        help_text="The match is an assumption: the note is shown next to correlations using it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["source__name", "name"]
        verbose_name_plural = "external aliases"
        constraints = [
            models.UniqueConstraint(fields=["source", "name"], name="external_alias_unique")
        ]

    def __str__(self) -> str:
        target = self.model.key if self.model is not None else "(not matched)"
        return f"{self.source.key}: {self.name} → {target}"


class Match(models.TextChoices):
    NONE = "", "Unmatched"
    ALIAS = "alias", "Alias table"
    KEY = "key", "Same as a catalogue key"
    IGNORED = "ignored", "Alias says: no model"


class ExternalScore(models.Model):
    """One model's score on one external board, under the source's spelling."""

    board = models.ForeignKey(ExternalBoard, on_delete=models.CASCADE, related_name="scores")
    name = models.CharField(max_length=200)
    value = models.FloatField()
    extra = models.JSONField(default=dict, blank=True)
    model = models.ForeignKey(
        ArenaModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    match = models.CharField(max_length=8, choices=Match.choices, default=Match.NONE, blank=True)

    class Meta:
        ordering = ["board", "-value"]
        constraints = [
            models.UniqueConstraint(fields=["board", "name"], name="external_score_unique")
        ]
        indexes = [models.Index(fields=["model", "board"], name="external_score_model_idx")]

    def __str__(self) -> str:
        return f"{self.name}: {self.value} on {self.board_id}"


class CorrelationResult(models.Model):
    """Arena ratings of one slice of a snapshot against one external board."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="+")
    slice_key = models.CharField(max_length=100)  # "overall", "task_type:frontend", ...
    board = models.ForeignKey(ExternalBoard, on_delete=models.CASCADE, related_name="+")
    n = models.PositiveIntegerField()
    spearman = models.FloatField(null=True)
    spearman_lower = models.FloatField(null=True)
    spearman_upper = models.FloatField(null=True)
    spearman_p = models.FloatField(null=True)
    pearson = models.FloatField(null=True)
    pearson_lower = models.FloatField(null=True)
    pearson_upper = models.FloatField(null=True)
    pearson_p = models.FloatField(null=True)
    points = models.JSONField(default=list)  # [{model, display_name, rating, score, name}]
    computed_at = models.DateTimeField()

    class Meta:
        ordering = ["snapshot", "slice_key", "board"]
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "slice_key", "board"], name="correlation_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.slice_key} vs {self.board_id} @ {self.snapshot_id}"
