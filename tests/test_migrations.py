"""Moving the catalogue and the API clients / audit log to their own apps keeps every row.

The database is taken back to the last migration state before the move, filled through the
historical models of that state, and migrated forward; everything must then be found through
today's models, with permissions (and so staff groups) still attached.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE_THE_MOVE = [
    ("catalogue", None),
    ("core", None),
    ("leaderboard", "0003_alter_arenamodel_options_alter_snapshot_options_and_more"),
    ("ingest", "0002_alter_battle_options"),
    ("moderation", "0001_initial"),
    ("external", "0001_initial"),
    ("serving", "0001_initial"),
    ("contenttypes", "0002_remove_content_type_name"),
    ("auth", "0012_alter_user_first_name_max_length"),
]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    if targets is None:
        targets = executor.loader.graph.leaf_nodes()
    executor.migrate(targets)
    return executor


def _fill(apps) -> dict:
    ArenaModel = apps.get_model("leaderboard", "ArenaModel")
    ModelAlias = apps.get_model("leaderboard", "ModelAlias")
    ApiClient = apps.get_model("ingest", "ApiClient")
    Battle = apps.get_model("ingest", "Battle")
    AuditEntry = apps.get_model("moderation", "AuditEntry")
    RatingConfig = apps.get_model("leaderboard", "RatingConfig")
    ModelProvider = apps.get_model("serving", "ModelProvider")
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")

    a = ArenaModel.objects.create(key="old-a", display_name="A", visibility="public")
    b = ArenaModel.objects.create(key="old-b", display_name="B", visibility="private")
    dup = ArenaModel.objects.create(key="old-dup", display_name="dup", merged_into=a)
    ModelAlias.objects.create(key="old-a-alias", model=a, note="renamed")
    client = ApiClient.objects.create(name="ci", key_prefix="abcd1234", key_hash="0" * 64)
    for i in range(25):
        Battle.objects.create(
            pair_id=f"mig-{i}",
            user_hash=f"{i:064d}",
            model_a=a if i % 2 else b,
            model_b=b if i % 2 else dup,
            outcome=i % 2,
            kind="completion",
            privacy="Private",
            source="api",
            client=client if i < 5 else None,
            content_hash=f"{i:064x}",
        )
    AuditEntry.objects.create(actor_name="alice", action="merge model", target="old-dup → old-a")
    RatingConfig.objects.create(pk=1, anchor=a, anchor_value=1000.0)
    ModelProvider.objects.create(model=a, kind="openai_chat", base_url="http://127.0.0.1:1/v1")
    group = Group.objects.create(name="Catalogue admins (test)")
    for app_label, model, codename in [
        ("leaderboard", "arenamodel", "merge_arenamodel"),
        ("ingest", "apiclient", "change_apiclient"),
        ("moderation", "auditentry", "view_auditentry"),
    ]:
        ct, _ = ContentType.objects.get_or_create(app_label=app_label, model=model)
        perm, _ = Permission.objects.get_or_create(
            content_type=ct, codename=codename, defaults={"name": codename}
        )
        group.permissions.add(perm)
    return {"a": a.pk, "b": b.pk, "dup": dup.pk, "client": client.pk}


@pytest.mark.django_db(transaction=True)
def test_the_move_to_core_and_catalogue_keeps_every_row():
    old = _migrate(BEFORE_THE_MOVE)
    state_nodes = [node for node in BEFORE_THE_MOVE if node[1] is not None]
    ids = _fill(old.loader.project_state(state_nodes).apps)

    _migrate(None)

    from django.contrib.auth.models import Group

    from catalogue.models import ArenaModel, ModelAlias
    from core.models import ApiClient, AuditEntry
    from ingest.models import Battle
    from leaderboard.models import RatingConfig
    from serving.models import ModelProvider

    assert sorted(ArenaModel.objects.values_list("key", flat=True)) == [
        "old-a",
        "old-b",
        "old-dup",
    ]
    assert ArenaModel.objects.get(key="old-dup").merged_into_id == ids["a"]
    assert ModelAlias.objects.get(key="old-a-alias").model_id == ids["a"]
    assert Battle.objects.count() == 25
    assert Battle.objects.filter(client_id=ids["client"]).count() == 5
    assert Battle.objects.filter(model_a_id=ids["a"]).count() == 12
    assert set(Battle.objects.values_list("model_b_id", flat=True)) == {ids["b"], ids["dup"]}
    assert ApiClient.objects.get(pk=ids["client"]).key_prefix == "abcd1234"
    assert AuditEntry.objects.get().target == "old-dup → old-a"
    assert RatingConfig.objects.get(pk=1).anchor_id == ids["a"]
    assert ModelProvider.objects.get().model_id == ids["a"]
    # The staff group kept its permissions, now under the apps that own the models.
    perms = {
        f"{p.content_type.app_label}.{p.codename}"
        for p in Group.objects.get(name="Catalogue admins (test)").permissions.all()
    }
    assert perms == {
        "catalogue.merge_arenamodel",
        "core.change_apiclient",
        "core.view_auditentry",
    }
    # New rows still get fresh ids from the kept tables' sequences.
    fresh = ArenaModel.objects.create(key="new-after-move", display_name="new")
    assert fresh.pk > max(ids.values())
