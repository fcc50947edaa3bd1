"""App config for contributors (accounts, personal leaderboards, top contributors)."""

from django.apps import AppConfig


class ContributorsConfig(AppConfig):
    name = "contributors"
    verbose_name = "Contributors"
