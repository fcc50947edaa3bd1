"""manage.py bootstrap_roles: the staff groups, and a first superuser from the environment.

ARENA_ADMIN_USERNAME, ARENA_ADMIN_EMAIL and ARENA_ADMIN_PASSWORD create the superuser when
set and when no user of that name exists; nothing is printed of the password.
"""

import os
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from moderation.roles import ensure_groups


class Command(BaseCommand):
    help = "Create the Moderators and Catalogue admins groups, and a superuser from ARENA_ADMIN_* variables."

    def handle(self, *args: Any, **options: Any) -> None:
        for name, group in ensure_groups().items():
            self.stdout.write(f"Group '{name}': {group.permissions.count()} permissions.")
        username = os.environ.get("ARENA_ADMIN_USERNAME")
        if not username:
            self.stdout.write("ARENA_ADMIN_USERNAME not set: no superuser created.")
            return
        password = os.environ.get("ARENA_ADMIN_PASSWORD")
        if not password:
            raise CommandError("ARENA_ADMIN_USERNAME is set but ARENA_ADMIN_PASSWORD is not.")
        User = get_user_model()
        if User.objects.filter(username=username).exists():
            self.stdout.write(f"User '{username}' already exists: left unchanged.")
            return
        User.objects.create_superuser(username, os.environ.get("ARENA_ADMIN_EMAIL", ""), password)
        self.stdout.write(f"Superuser '{username}' created.")
