"""App config for the offline evaluations (runs, items, Celery tasks, admin)."""

from __future__ import annotations

from django.apps import AppConfig


class EvaluationsConfig(AppConfig):
    name = "evaluations"
    verbose_name = "Offline evaluations"
