"""Anomaly reports: suspicious voting patterns waiting for a moderator's decision."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class AnomalyReport(models.Model):
    """A suspicious pattern found by the anomaly task, waiting for a moderator's decision."""

    class Rule(models.TextChoices):
        DAILY_CAP = "daily_cap", "Votes per day above the cap"
        TOP_SLOT = "top_slot", "Always picks the top completion"
        OUTLIER = "outlier", "Votes unlike everyone else's (Chatbot Arena test)"
        IP_BURST = "ip_burst", "Burst of votes from one IP"
        INHUMAN_PACE = "inhuman_pace", "Votes faster than a person can read"
        IMPLAUSIBLE_LATENCY = "implausible_latency", "Completion latencies too short to be real"

    class Status(models.TextChoices):
        OPEN = "open", "Open (its votes held pending review)"
        EXCLUDED = "excluded", "Battles excluded"
        DISMISSED = "dismissed", "Dismissed (held votes released)"

    rule = models.CharField(max_length=24, choices=Rule.choices, db_index=True)
    subject_kind = models.CharField(max_length=10)  # user, ip, battle
    subject = models.CharField(max_length=128)
    battles = models.PositiveIntegerField(default=0)
    # Battles this report holds out of the board now (ANOMALY_HOLD), until released/excluded.
    held = models.PositiveIntegerField(default=0)
    detail = models.JSONField(default=dict)
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.OPEN, db_index=True
    )
    first_seen = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField(auto_now=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolution = models.TextField(blank=True)

    class Meta:
        ordering = ["status", "-last_seen"]
        constraints = [
            models.UniqueConstraint(
                fields=["rule", "subject_kind", "subject"],
                condition=models.Q(status="open"),
                name="one_open_report_per_subject",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_rule_display()}: {self.subject_kind} {self.subject[:16]}"
