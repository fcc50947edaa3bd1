"""Leaderboard tables: published snapshots with their slice boards and rows, and the rating configuration."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from analysis.scale import CENTRE
from catalogue.models import ArenaModel


class Snapshot(models.Model):
    """One complete computation of the board and all its slices, published atomically."""

    class Status(models.TextChoices):
        RUNNING = "running"  # a recompute is writing it (or died doing so: see recompute.py)
        PUBLISHED = "published"
        FAILED = "failed"

    status = models.CharField(max_length=10, choices=Status.choices, db_index=True)
    computed_at = models.DateTimeField()
    trigger = models.CharField(max_length=20, blank=True)
    method = models.CharField(max_length=20)
    # "clustered by N users [, with M battles without a user as independent votes] [(resampled
    # in G fixed groups)]" or "independent votes":
    # what the overall board's intervals assumed.
    intervals = models.CharField(max_length=120, blank=True, default="")
    # RatingConfig.weights of the overall board, and what it meant on this run's data.
    weights = models.CharField(max_length=12, default="none")
    weights_label = models.CharField(max_length=200, blank=True, default="")
    rounds = models.PositiveIntegerField(default=0)
    seed = models.BigIntegerField(default=0)
    anchor = models.CharField(max_length=128, blank=True)
    anchor_value = models.FloatField(default=CENTRE)
    position_bias = models.BooleanField(default=False)
    battles = models.PositiveIntegerField(default=0)
    users = models.PositiveIntegerField(default=0)
    simulated_battles = models.PositiveIntegerField(default=0)
    # Battles stored without a user id: not a user, each an independent vote in the intervals.
    userless_battles = models.PositiveIntegerField(default=0)
    # Battles held out of this board pending a decision (ingest.models.Hold: a flagged
    # user's recent votes, votes for pairs this server did not serve); not in `battles`.
    held_battles = models.PositiveIntegerField(default=0)
    aggregate_seconds = models.FloatField(default=0.0)
    fit_seconds = models.FloatField(default=0.0)
    duration_seconds = models.FloatField(default=0.0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-id"]
        get_latest_by = "id"
        permissions = [("recompute_snapshot", "Can start a recompute of the leaderboard")]

    def __str__(self) -> str:
        return f"snapshot {self.pk} ({self.status}, {self.computed_at:%Y-%m-%d %H:%M})"


class SnapshotSlice(models.Model):
    """The board for one category (overall, or one value of one slice dimension)."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="slices")
    key = models.CharField(max_length=100)  # "overall", "language:python", ...
    dimension = models.CharField(max_length=30)
    value = models.CharField(max_length=64, blank=True)
    battles = models.PositiveIntegerField()
    models_order = models.JSONField(default=list)  # model keys, index order of the matrices
    matrices = models.JSONField(default=dict)
    # The grouped counts the overall board was fitted on (models, a, b, outcome, count),
    # for reads that need the crowd's battles without scanning them (personal leaderboards).
    counts = models.JSONField(null=True, blank=True)
    top_slot_p = models.FloatField(null=True)
    top_slot_lower = models.FloatField(null=True)
    top_slot_upper = models.FloatField(null=True)
    # What held this board's scale, in words ("codestral-2405 held at 1000", or the mean of
    # the shown models where the anchor is not rated): the page prints this, not the config.
    scale_label = models.CharField(max_length=300, blank=True)
    anchor_applied = models.BooleanField(default=False)
    # Overall board only: for the top neighbour pairs, the votes whose removal would swap
    # them (analysis.robustness.PlaceHold.to_dict(): upper, challenger, gap, votes, searched).
    robustness = models.JSONField(default=list, blank=True)
    # Overall board only: the controlled fit (leaderboard.controlled.ControlledBoard.to_json():
    # covariate coefficients with 95% intervals, the battles it read, how many had each
    # covariate); None where not computed.
    controlled = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["snapshot", "key"], name="slice_key_unique")]

    def __str__(self) -> str:
        return f"{self.key} @ {self.snapshot_id}"


class SnapshotRow(models.Model):
    """One model's line on one slice's board."""

    slice = models.ForeignKey(SnapshotSlice, on_delete=models.CASCADE, related_name="rows")
    model = models.ForeignKey(ArenaModel, on_delete=models.CASCADE, related_name="snapshot_rows")
    public = models.BooleanField()  # visibility at compute time
    rating = models.FloatField(null=True)
    ci_lower = models.FloatField(null=True)
    ci_upper = models.FloatField(null=True)
    median = models.FloatField(null=True)
    rank = models.PositiveIntegerField(null=True)  # Rank (UB) among public models
    rank_change = models.IntegerField(null=True)  # overall rank - this slice's rank
    # Whether the rank change is beyond sampling noise: this board's interval and the overall
    # board's for the model do not overlap (leaderboard.ranks.clear_change).
    rank_change_clear = models.BooleanField(null=True)
    # The position-aware fit (top-slot advantage as an extra parameter), overall slice only.
    adjusted_rating = models.FloatField(null=True)
    adjusted_ci_lower = models.FloatField(null=True)
    adjusted_ci_upper = models.FloatField(null=True)
    # The controlled fit (position, length, latency held at the reference), overall slice only.
    controlled_rating = models.FloatField(null=True)
    controlled_ci_lower = models.FloatField(null=True)
    controlled_ci_upper = models.FloatField(null=True)
    controlled_rank = models.PositiveIntegerField(null=True)  # Rank (UB) on the controlled board
    votes = models.PositiveIntegerField()
    avg_win_rate = models.FloatField(null=True)
    status = models.CharField(max_length=20)
    # Served latency when the snapshot was computed (leaderboard.latency); None: too few samples.
    latency_p50_ms = models.FloatField(null=True)
    latency_p90_ms = models.FloatField(null=True)
    latency_samples = models.PositiveIntegerField(null=True)

    class Meta:
        indexes = [models.Index(fields=["model", "slice"], name="row_model_slice_idx")]

    def __str__(self) -> str:
        return f"{self.model_id} in {self.slice_id}"


class RatingConfig(models.Model):
    """How the board is computed; one row, edited in the admin. Applies from the next recompute."""

    class Method(models.TextChoices):
        BOOTSTRAP = "bootstrap", "Bootstrap percentiles"
        SANDWICH = "sandwich", "Closed-form sandwich"

    class Intervals(models.TextChoices):
        CLUSTERED = "clustered", "Clustered by user (overall board)"
        IID = "iid", "Independent votes"

    method = models.CharField(max_length=10, choices=Method.choices, default=Method.BOOTSTRAP)
    intervals = models.CharField(
        max_length=10,
        choices=Intervals.choices,
        default=Intervals.CLUSTERED,
        help_text=(
            "Clustered: the overall board's intervals treat each user's votes as one unit "
            "(resampled together), which keeps 95% coverage when developers vote in bulk "
            "(docs/ratings.md); slices use independent votes."
        ),
    )

    class Weights(models.TextChoices):
        NONE = "none", "None (every vote weighs 1)"
        PAIR_COUNT = "pair_count", "Inverse pair count (arena-rank)"
        PROPENSITY = "propensity", "Inverse sampler propensity"

    weights = models.CharField(
        max_length=12,
        choices=Weights.choices,
        default=Weights.NONE,
        help_text=(
            "Vote weights of the overall board's fit (slices stay unweighted). Inverse pair "
            "count: every pair of models gets the same total weight (1 / max(votes of the "
            "pair, 50) per vote). Inverse sampler propensity: a vote weighs 1 / (P x the "
            "probability our pair server drew its pair with), P = the number of pairs, so "
            "the board targets what a uniform sampler would give; votes of pairs we did not "
            "serve weigh 1. Costs one GROUP BY over all battles per recompute "
            "(docs/ratings.md, 'Weights in the product')."
        ),
    )
    user_cap_day = models.PositiveIntegerField(
        default=50,
        help_text=(
            "Per-user influence bound of the overall board's fit: a user's votes of one UTC "
            "day weigh at most this many votes together (scaled down alike); 0 = no daily cap. "
            "Multiplies the weights above (docs/ratings.md, 'Vote rigging')."
        ),
    )
    user_cap_total = models.PositiveIntegerField(
        default=200,
        help_text="A user's votes weigh at most this many votes in all; 0 = no cap.",
    )
    dedup_contexts = models.BooleanField(
        default=True,
        help_text=(
            "A user's votes on one identical code context (prefix and suffix, by a keyed "
            "fingerprint) count once together in the overall board's fit."
        ),
    )
    rounds = models.PositiveIntegerField(
        default=1000, help_text="Bootstrap rounds (overall board)."
    )
    slice_rounds = models.PositiveIntegerField(
        default=1000, help_text="Bootstrap rounds per slice."
    )
    seed = models.BigIntegerField(
        default=0, help_text="Fixed so the same data gives the same intervals."
    )
    anchor = models.ForeignKey(
        ArenaModel,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Model held at the anchor value; empty = the mean rating is held at it.",
    )
    anchor_value = models.FloatField(default=CENTRE)
    slice_min_battles = models.PositiveIntegerField(
        default=200, help_text="A slice with fewer battles gets no board."
    )
    min_model_votes = models.PositiveIntegerField(
        default=30,
        help_text="A model with fewer votes on a board (overall or a slice) is left out of that board's fit.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "rating configuration"
        verbose_name_plural = "rating configuration"

    def __str__(self) -> str:
        return "Rating configuration"

    @classmethod
    def current(cls) -> RatingConfig:
        config, _ = cls.objects.get_or_create(pk=1)
        return config


# Pre-aggregated battle counts, maintained by the recompute (leaderboard/incremental.py).
# Model ids are plain integers (not foreign keys): merges are applied when the counts are
# read, so a merge or unmerge changes no stored count. Counts are kept per slice dimension
# separately (dimension "all" is the overall board, "source" counts simulated battles), not
# per combination of dimensions: a slice board needs only its own dimension, and this way
# the tables' size is bounded by models x values, whatever the arena's history.
class DayCell(models.Model):
    """Non-excluded battles of one UTC day per (dimension, value, A, B, outcome)."""

    day = models.DateField(db_index=True)
    dimension = models.CharField(max_length=20)
    value = models.CharField(max_length=32)
    model_a = models.IntegerField()
    model_b = models.IntegerField()
    outcome = models.PositiveSmallIntegerField()
    count = models.PositiveIntegerField()

    def __str__(self) -> str:
        return (
            f"{self.day} {self.dimension}={self.value} {self.model_a}-{self.model_b}: {self.count}"
        )


class CellTotal(models.Model):
    """The sum of DayCell over all days: what a recompute reads instead of every battle."""

    dimension = models.CharField(max_length=20)
    value = models.CharField(max_length=32)
    model_a = models.IntegerField()
    model_b = models.IntegerField()
    outcome = models.PositiveSmallIntegerField()
    count = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["dimension", "value", "model_a", "model_b", "outcome"],
                name="cell_total_key",
            )
        ]
        # Emptied cells are deleted after each refresh: found through this, not a scan.
        indexes = [models.Index(fields=["count"], condition=Q(count=0), name="cell_total_empty")]

    def __str__(self) -> str:
        return f"{self.dimension}={self.value} {self.model_a}-{self.model_b}: {self.count}"


class DayUserCell(models.Model):
    """Non-excluded battles of one UTC day per (user, A, B, outcome), for clustered intervals."""

    day = models.DateField(db_index=True)
    # A 64-bit hash of user_hash (count_tables.USER_KEY): an integer groups and sorts many
    # times faster than the 64-character pseudonym; a collision between two of a million
    # users (odds ~3e-8) would only merge two clusters of the clustered intervals.
    user_key = models.BigIntegerField()
    model_a = models.IntegerField()
    model_b = models.IntegerField()
    outcome = models.PositiveSmallIntegerField()
    count = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"{self.day} user {self.user_key} {self.model_a}-{self.model_b}: {self.count}"


class UserCellTotal(models.Model):
    """The sum of DayUserCell over all days."""

    user_key = models.BigIntegerField()
    model_a = models.IntegerField()
    model_b = models.IntegerField()
    outcome = models.PositiveSmallIntegerField()
    count = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user_key", "model_a", "model_b", "outcome"], name="user_cell_total_key"
            )
        ]
        indexes = [
            models.Index(fields=["count"], condition=Q(count=0), name="user_cell_total_empty")
        ]

    def __str__(self) -> str:
        return f"user {self.user_key} {self.model_a}-{self.model_b}: {self.count}"


class UserGroupCellTotal(models.Model):
    """UserCellTotal summed over users in fixed groups (user_key mod GROUPS, see
    leaderboard/incremental.py): what the clustered intervals of an arena with very many
    users read, at most GROUPS x cells rows whatever the number of users."""

    user_group = models.IntegerField()
    model_a = models.IntegerField()
    model_b = models.IntegerField()
    outcome = models.PositiveSmallIntegerField()
    count = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user_group", "model_a", "model_b", "outcome"],
                name="user_group_cell_total_key",
            )
        ]
        indexes = [
            models.Index(fields=["count"], condition=Q(count=0), name="user_group_cell_empty")
        ]

    def __str__(self) -> str:
        return f"user group {self.user_group} {self.model_a}-{self.model_b}: {self.count}"


class UserTotal(models.Model):
    """Non-excluded battles per user (UserCellTotal summed): one row per user."""

    user_key = models.BigIntegerField(unique=True)
    count = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["count"], condition=Q(count=0), name="user_total_empty")]

    def __str__(self) -> str:
        return f"user {self.user_key}: {self.count}"


class BattleMark(models.Model):
    """A day whose battles a transaction inserted, changed or deleted (written by a trigger).

    Append-only with no index but its key, so a vote's transaction never waits on it; a
    refresh deletes the marks it has seen (leaderboard/incremental.py).
    """

    day = models.DateField()

    def __str__(self) -> str:
        return f"battles of {self.day} changed"


class AggregationState(models.Model):
    """One row: how far the maintained counts are up to date."""

    built = models.BooleanField(default=False)
    cells = models.PositiveIntegerField(default=0)  # CellTotal rows after the last refresh
    refreshed_at = models.DateTimeField(null=True)
    rebuilt_at = models.DateTimeField(null=True)
    reconciled_at = models.DateTimeField(null=True)
    last_mismatch = models.PositiveIntegerField(default=0)
    # UserCellTotal is kept only while the users are few (incremental._keeps_user_cells).
    user_cells_current = models.BooleanField(default=True)
    # Changed by every refresh that changes counts (leaderboard/group_cache.py).
    group_version = models.CharField(max_length=32, blank=True, default="")

    def __str__(self) -> str:
        return f"counts refreshed {self.refreshed_at}"
