"""Evaluation runs as stored objects: runs, their items, question sets and judge endpoints.

* `EvaluationRun`: one suite on one catalogue model, with what it was run with (the
  provider's settings as they were, never a key; the prompt version and fingerprint; the
  judge and baseline of a CodeArena run), its status and progress, the tokens and cost the
  providers reported, and its summary once done.
* `EvaluationItem`: one problem or question of a run (unique per run and item key): the raw
  answer, what was extracted from it, the outcome, latencies, errors. The lease fields let
  several drivers share a run and a later driver take over the items of one that died.
* `QuestionSet` / `Question`: CodeArena-layout question sets imported into the database;
  `BaselineAnswer`: a baseline model's answer, generated once per question and reused.
* `JudgeEndpoint`: an OpenAI-compatible chat endpoint used only as a judge (a catalogue
  model with a provider can judge too).

Items hold benchmark material (problems, model answers to them), never users' code.
"""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from catalogue.models import ArenaModel
from serving.models import ModelProvider, api_key_env_validator, validate_base_url


class Suite(models.TextChoices):
    HUMANEVAL = "humaneval", "HumanEval greedy pass@1"
    INFILLING = "infilling", "HumanEval-infilling (pass@1, well-formatted rate)"
    CODEARENA = "codearena", "CodeArena judge win rate"


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


ACTIVE_STATUSES = (RunStatus.QUEUED, RunStatus.RUNNING)


class ItemState(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"


class JudgeEndpoint(models.Model):
    """An OpenAI-compatible chat model used as a judge without being in the catalogue."""

    name = models.SlugField(max_length=60, unique=True)
    base_url = models.CharField(
        max_length=500,
        validators=[validate_base_url],
        help_text="Up to and including the API version; /chat/completions is appended.",
    )
    remote_model = models.CharField(max_length=200)
    api_key_env = models.CharField(
        "API key environment variable",
        max_length=64,
        blank=True,
        validators=[api_key_env_validator],
        help_text="Name of the environment variable holding the key in the workers.",
    )
    timeout_seconds = models.FloatField(
        default=120.0, validators=[MinValueValidator(1.0), MaxValueValidator(600.0)]
    )
    max_concurrency = models.PositiveIntegerField(
        default=4, validators=[MinValueValidator(1)], help_text="Calls in flight, all workers."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class QuestionSet(models.Model):
    """A CodeArena-layout question set (``import_questions`` or the admin's import)."""

    name = models.SlugField(max_length=80, unique=True)
    file_name = models.CharField(max_length=300, blank=True)
    file_sha256 = models.CharField(max_length=64, blank=True)
    imported_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Question(models.Model):
    question_set = models.ForeignKey(
        QuestionSet, on_delete=models.CASCADE, related_name="questions"
    )
    position = models.PositiveIntegerField()
    question_id = models.CharField(max_length=200)
    question = models.TextField()
    category = models.CharField(max_length=200, blank=True)
    subtask = models.CharField(max_length=200, blank=True)
    language = models.CharField(max_length=60, blank=True)
    difficulty = models.CharField(max_length=60, blank=True)
    baseline_answer = models.TextField(blank=True, help_text="The set's own baseline answer.")

    class Meta:
        ordering = ["question_set", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["question_set", "question_id"], name="evaluations_question_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.question_set.name}/{self.question_id}"


class BaselineAnswer(models.Model):
    """A baseline model's answer to one question: generated once, reused by later runs."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="+")
    model = models.ForeignKey(ArenaModel, on_delete=models.CASCADE, related_name="+")
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["question", "model"], name="evaluations_baseline_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.model_id} on {self.question_id}"


class EvaluationRun(models.Model):
    suite = models.CharField(max_length=12, choices=Suite.choices)
    dataset = models.CharField(
        max_length=80,
        help_text="HumanEval; the infilling set (single-line, random-span-light, multi-line); "
        "or the question set's name.",
    )
    model = models.ForeignKey(ArenaModel, on_delete=models.CASCADE, related_name="+")
    provider = models.ForeignKey(
        ModelProvider, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The provider's settings at creation (kind, URL, remote name, key *variable name*,
    # limits): the run uses these, so editing the provider does not change a run under way.
    provider_settings = models.JSONField(default=dict)
    judge_model = models.ForeignKey(
        ArenaModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    judge_endpoint = models.ForeignKey(
        JudgeEndpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    judge_settings = models.JSONField(default=dict, blank=True)
    baseline_model = models.ForeignKey(
        ArenaModel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    baseline_settings = models.JSONField(default=dict, blank=True)
    generation = models.JSONField(default=dict)
    prompt_version = models.CharField(max_length=60)
    prompt_fingerprint = models.CharField(max_length=32, blank=True)
    sandbox = models.JSONField(default=dict, blank=True)  # limits and isolation asked for
    item_limit = models.PositiveIntegerField(null=True, blank=True)
    concurrency = models.PositiveIntegerField(default=4, validators=[MinValueValidator(1)])

    status = models.CharField(
        max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True
    )
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0, help_text="Items whose call failed.")
    prompt_tokens = models.BigIntegerField(default=0)
    completion_tokens = models.BigIntegerField(default=0)
    calls_with_usage = models.PositiveIntegerField(default=0)
    calls = models.PositiveIntegerField(default=0)
    cost = models.FloatField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True, help_text="The suite's headline score (%).")
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # When every item was first done and the run summarised (or, for a run that never got
    # there, when it was cancelled or failed); a retry of failed items or a re-score keeps it
    # and records its own time in rescored_at, so an old run never passes for a newer one.
    finished_at = models.DateTimeField(null=True, blank=True)
    rescored_at = models.DateTimeField(null=True, blank=True)
    created_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["suite", "model", "status"], name="evaluations_run_idx")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.suite} on {self.model.key}"

    @property
    def progress(self) -> str:
        return f"{self.done}/{self.total}"


class EvaluationItem(models.Model):
    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    item_key = models.CharField(max_length=200)
    state = models.CharField(max_length=8, choices=ItemState.choices, default=ItemState.PENDING)
    # The suite's outcome: a sandbox status, no_function or provider_error (HumanEval and
    # infilling); win / tie / loss / not_judged (CodeArena).
    outcome = models.CharField(max_length=20, blank=True)
    passed = models.BooleanField(null=True)
    well_formatted = models.BooleanField(null=True)
    score = models.FloatField(null=True, blank=True)
    raw_output = models.TextField(blank=True)
    extracted = models.TextField(blank=True, help_text="The function, the middle, or empty.")
    details = models.JSONField(default=dict, blank=True)
    latency_s = models.FloatField(null=True, blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    claim = models.CharField(max_length=32, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "item_key"], name="evaluations_item_unique")
        ]
        indexes = [models.Index(fields=["run", "state", "position"], name="evaluations_item_todo")]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.item_key}"
