"""The two staff groups and what each may do. Superusers may do everything.

Moderators look after votes (exclude/restore, anomaly reports); catalogue admins look after
models, API clients, the rating configuration and (when those apps are installed) external
scores and providers. Both may read the audit log and start a recompute.
"""

from __future__ import annotations

from django.apps import apps
from django.contrib.auth.models import Group, Permission

MODERATORS = "Moderators"
CATALOGUE = "Catalogue admins"

SHARED = [
    "leaderboard.view_snapshot",
    "leaderboard.recompute_snapshot",
    "core.view_auditentry",
]
ROLE_PERMISSIONS: dict[str, list[str]] = {
    MODERATORS: [
        *SHARED,
        "ingest.view_battle",
        "ingest.moderate_battle",
        "ingest.view_completionlog",
        "ingest.view_singleoutcome",
        "moderation.view_anomalyreport",
        "moderation.change_anomalyreport",
    ],
    CATALOGUE: [
        *SHARED,
        "catalogue.add_arenamodel",
        "catalogue.change_arenamodel",
        "catalogue.view_arenamodel",
        "catalogue.merge_arenamodel",
        "catalogue.add_modelalias",
        "catalogue.change_modelalias",
        "catalogue.delete_modelalias",
        "catalogue.view_modelalias",
        "leaderboard.change_ratingconfig",
        "leaderboard.view_ratingconfig",
        "core.add_apiclient",
        "core.change_apiclient",
        "core.view_apiclient",
    ],
}
# Every permission of these apps goes to the catalogue admins, if the app is installed.
CATALOGUE_APPS = ("external", "serving")


def _permission(codename: str) -> Permission:
    app_label, code = codename.split(".")
    return Permission.objects.get(content_type__app_label=app_label, codename=code)


def ensure_groups() -> dict[str, Group]:
    """Create the groups (idempotent) and set exactly their permissions."""
    groups = {}
    for name, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        perms = [_permission(c) for c in codenames]
        if name == CATALOGUE:
            labels = [a for a in CATALOGUE_APPS if apps.is_installed(a)]
            perms += list(Permission.objects.filter(content_type__app_label__in=labels))
        group.permissions.set(perms)
        groups[name] = group
    return groups
