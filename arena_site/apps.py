"""The site itself as an app: commands that span every app (the demo loader)."""

from django.apps import AppConfig


class SiteConfig(AppConfig):
    name = "arena_site"
    verbose_name = "Site"
