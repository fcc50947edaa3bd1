"""The site itself as an app: commands that span every app (the demo loader), task discovery."""

from django.apps import AppConfig


class SiteConfig(AppConfig):
    name = "arena_site"
    verbose_name = "Site"

    def ready(self) -> None:
        # Celery discovers the apps' tasks modules lazily, when a worker starts. A web
        # process or a manage.py command that names a task (ingest.triggers looks the
        # recompute up by name) would not find it: import them all here, once the apps
        # are loaded, in every process.
        from .celery import app

        app.autodiscover_tasks(force=True)
