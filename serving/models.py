"""What pair serving is configured with and what its latency fit produced.

- `ModelProvider`: how to reach one catalogue model (one-to-one with `ArenaModel`). The API
  key is never stored: only the *name* of the environment variable that holds it.
- `SamplingConfig`: one row; temperature and floor of the latency-aware pair distribution,
  the weight of the information term, the prior's weight and the latency window.
- `PairDistribution`: the result of one latency fit (per-model log-normal fits, the prior,
  the pair table under the config of the time). The endpoint uses the newest row's fits with
  the *current* config, so changing tau or the floor takes effect without a refit.
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.utils import timezone

from catalogue.models import ArenaModel, Visibility

# The measured default mix of latency and information (benchmarks/bench_active_sampling.py).
DEFAULT_INFORMATION_WEIGHT = 0.4

# Visibilities whose models are served (hidden and retired ones are not).
SERVED_VISIBILITIES = (Visibility.PUBLIC, Visibility.PRIVATE)

# Environment variable names as shells write them. Upper case only: most API keys contain
# lower-case letters, so a key pasted here by mistake is refused instead of stored.
api_key_env_validator = RegexValidator(
    r"^[A-Z][A-Z0-9_]{0,63}$",
    "The name of an environment variable (e.g. OPENAI_API_KEY): upper-case letters, digits "
    "and _. Never the key itself.",
)


def validate_base_url(value: str) -> None:
    """http(s) with a host; no credentials, query or fragment (those could carry secrets)."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("Must be an http:// or https:// URL with a host.")
    if parts.username or parts.password:
        raise ValidationError(
            "Must not contain credentials; put the key in an environment variable."
        )
    if parts.query or parts.fragment:
        raise ValidationError("Must not contain a query string or fragment.")


class ProviderKind(models.TextChoices):
    OPENAI_CHAT = "openai_chat", "OpenAI-compatible chat (/chat/completions; FiM by prompting)"
    OPENAI_COMPLETION = (
        "openai_completion",
        "OpenAI-compatible completion with suffix (/completions; native FiM: vLLM, "
        "llama.cpp server, Ollama, DeepSeek beta)",
    )
    MISTRAL_FIM = "mistral_fim", "Mistral FiM (/fim/completions)"


class ModelProvider(models.Model):
    """How this server asks one catalogue model for completions."""

    model = models.OneToOneField(ArenaModel, on_delete=models.CASCADE, related_name="provider")
    kind = models.CharField(max_length=20, choices=ProviderKind.choices)
    base_url = models.CharField(
        max_length=500,
        validators=[validate_base_url],
        help_text="Up to and including the API version, e.g. https://api.openai.com/v1, "
        "http://127.0.0.1:8001/v1 (vLLM), http://127.0.0.1:11434/v1 (Ollama), "
        "https://api.deepseek.com/beta, https://codestral.mistral.ai/v1. The route "
        "(/chat/completions, /completions, /fim/completions) is appended.",
    )
    remote_model = models.CharField(
        max_length=200, help_text="The model name the endpoint expects (its `model` field)."
    )
    api_key_env = models.CharField(
        "API key environment variable",
        max_length=64,
        blank=True,
        validators=[api_key_env_validator],
        help_text="Name of the environment variable holding the key, read by the web "
        "processes at request time; empty = no Authorization header (local servers).",
    )
    timeout_seconds = models.FloatField(
        default=10.0,
        validators=[MinValueValidator(0.1), MaxValueValidator(120.0)],
        help_text="One call's limit. A slower answer counts as a failure and a substitute "
        "model is asked if the pair's deadline allows.",
    )
    max_concurrency = models.PositiveIntegerField(
        default=32,
        validators=[MinValueValidator(1)],
        help_text="Calls in flight at once per web process; beyond it this model is skipped "
        "(a substitute is drawn) rather than queued.",
    )
    tags = models.CharField(
        max_length=200,
        blank=True,
        help_text="Comma-separated tags the extension may request with `modelTags` "
        "(a request with tags draws only among models carrying at least one of them).",
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["model__key"]
        verbose_name = "model provider"

    def __str__(self) -> str:
        return f"{self.model.key} via {self.get_kind_display().split(' (')[0]}"

    @property
    def tag_set(self) -> frozenset[str]:
        return frozenset(t.strip() for t in re.split(r"[,\s]+", self.tags) if t.strip())

    @property
    def key_present(self) -> bool:
        """Whether the key's environment variable is set here (never its value)."""
        return not self.api_key_env or bool(os.environ.get(self.api_key_env))


class SamplingConfig(models.Model):
    """Latency-aware pair sampling; one row, edited in the admin."""

    tau_seconds = models.FloatField(
        "tau (seconds)",
        null=True,
        blank=True,
        default=1.0,
        validators=[MinValueValidator(0.0)],
        help_text="Temperature of p_ij ∝ exp(-E_ij / tau), E_ij the expected wait for the "
        "slower of the two models. Smaller favours fast pairs; empty = uniform sampling.",
    )
    floor = models.FloatField(
        default=0.2,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Every pair keeps at least this fraction of its uniform share, so slow "
        "models still get votes.",
    )
    information_weight = models.FloatField(
        "information weight (lambda)",
        default=DEFAULT_INFORMATION_WEIGHT,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Mix of latency and information: p_ij ∝ exp(-(1 - lambda) E_ij / tau) x "
        "info_ij^lambda above the floor, info_ij = how much one more vote on the pair would "
        "narrow the published board's intervals and top-rank gaps (a model under the vote "
        "minimum counts more). 0 = latency only, 1 = information only; without a published "
        "board, latency only (docs/ratings.md, 'Information-aware sampling').",
    )
    prior_weight = models.FloatField(
        default=5.0,
        validators=[MinValueValidator(0.0)],
        help_text="Worth of the pooled prior in latencies: a new model is assumed typical "
        "until it has several times this many successful completions.",
    )
    window_days = models.PositiveIntegerField(
        default=14,
        validators=[MinValueValidator(1)],
        help_text="Only successful completions served here in this many days are fitted.",
    )
    max_samples_per_model = models.PositiveIntegerField(
        default=2000,
        validators=[MinValueValidator(2)],
        help_text="At most this many of each model's newest latencies are fitted.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "sampling configuration"
        verbose_name_plural = "sampling configuration"

    def __str__(self) -> str:
        return "Sampling configuration"

    @classmethod
    def current(cls) -> SamplingConfig:
        config, _ = cls.objects.get_or_create(pk=1)
        return config


class PairDistribution(models.Model):
    """One latency fit (Celery task `serving.tasks.fit_latencies` or the admin button)."""

    computed_at = models.DateTimeField(default=timezone.now, db_index=True)
    window_days = models.PositiveIntegerField()
    samples = models.PositiveIntegerField(help_text="Latencies fitted, all models.")
    prior_mu = models.FloatField()
    prior_sigma = models.FloatField()
    prior_weight = models.FloatField()
    # [{"model_id", "key", "mu", "sigma", "n"}], ln-seconds; the endpoint's input.
    fits = models.JSONField(default=list)
    # Config at fit time and the resulting table, kept as a record of what was served.
    tau_seconds = models.FloatField(null=True, blank=True)
    floor = models.FloatField()
    # lambda at fit time; the table's information term read the board published then.
    information_weight = models.FloatField(default=0.0)
    # [{"a", "b", "p", "expected_s", "median_s"}] over the models servable at fit time.
    pairs = models.JSONField(default=list)
    median_wait_s = models.FloatField(null=True, blank=True)
    uniform_median_wait_s = models.FloatField(null=True, blank=True)
    mean_wait_s = models.FloatField(null=True, blank=True)
    uniform_mean_wait_s = models.FloatField(null=True, blank=True)
    duration_ms = models.FloatField(default=0.0)

    class Meta:
        ordering = ["-id"]
        get_latest_by = "id"
        verbose_name = "pair distribution (latency fit)"
        verbose_name_plural = "pair distributions (latency fits)"

    def __str__(self) -> str:
        return f"fit {self.pk} at {self.computed_at:%Y-%m-%d %H:%M}"
