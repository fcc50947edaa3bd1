"""The admin as moderators use it: users by pseudonym, "involves model X", typed counts for
large selections, merge lists by display name."""

from __future__ import annotations

import io

from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.management import call_command
from django.db.models import Q

from catalogue.models import ArenaModel, Visibility
from ingest.models import Battle
from tests.moderation.conftest import logged_in


def simulate(n: int) -> None:
    call_command("simulate_battles", "--battles", str(n), "--seed", "5", stdout=io.StringIO())


def test_battle_list_shows_a_user_pseudonym_with_its_links(moderator):
    simulate(50)
    mod = logged_in(moderator)
    user = Battle.objects.exclude(user_hash="").values_list("user_hash", flat=True).first()
    page = mod.get("/admin/ingest/battle/").content.decode()
    assert f'?user_hash={user}" title="All battles of this user">{user[:8]}</a>' in page
    assert f'/admin/ingest/battle/moderate-user/?user_hash={user}">(exclude)</a>' in page
    r = mod.get(f"/admin/ingest/battle/?user_hash={user}")
    assert r.context["cl"].result_count == Battle.objects.filter(user_hash=user).count()
    form = mod.get(f"/admin/ingest/battle/moderate-user/?user_hash={user}").content.decode()
    assert f'value="{user}"' in form


def test_filter_battles_involving_a_model_on_either_side(moderator):
    simulate(200)
    model = ArenaModel.objects.get(key="codestral-2405")
    mod = logged_in(moderator)
    r = mod.get(f"/admin/ingest/battle/?involves={model.pk}")
    both = Battle.objects.filter(Q(model_a=model) | Q(model_b=model)).count()
    assert r.context["cl"].result_count == both > Battle.objects.filter(model_a=model).count()
    assert f"{model.display_name} ({model.key})" in r.content.decode()


def test_excluding_over_a_thousand_battles_needs_the_count_typed(moderator):
    simulate(1100)
    total = Battle.objects.count()
    mod = logged_in(moderator)
    base = {
        "action": "exclude_battles",
        "select_across": "1",
        ACTION_CHECKBOX_NAME: [Battle.objects.first().pk],
        "index": 0,
        "apply": "1",
        "reason": "test",
    }
    r = mod.post("/admin/ingest/battle/", base)
    assert r.status_code == 200 and "Type the number of rows" in r.content.decode()
    r = mod.post("/admin/ingest/battle/", {**base, "count": total - 1})
    assert f"This selection has {total:,} rows" in r.content.decode()
    assert not Battle.objects.filter(excluded=True).exists()
    r = mod.post("/admin/ingest/battle/", {**base, "count": total})
    assert r.status_code == 302 and Battle.objects.filter(excluded=True).count() == total


def test_a_small_selection_needs_no_count(moderator):
    simulate(50)
    ids = list(Battle.objects.values_list("id", flat=True)[:3])
    r = logged_in(moderator).post(
        "/admin/ingest/battle/",
        {
            "action": "exclude_battles",
            ACTION_CHECKBOX_NAME: ids,
            "index": 0,
            "apply": "1",
            "reason": "spam",
        },
    )
    assert r.status_code == 302 and Battle.objects.filter(excluded=True).count() == 3


def test_merge_list_by_display_name_without_hidden_models_unless_asked(cataloguer):
    simulate(20)
    source = ArenaModel.objects.get(key="codestral-2405")
    hidden = ArenaModel.objects.exclude(pk=source.pk).first()
    hidden.visibility = Visibility.HIDDEN
    hidden.save()
    shown = ArenaModel.objects.exclude(pk__in=[source.pk, hidden.pk]).first()
    cat = logged_in(cataloguer)
    page = cat.get(f"/admin/catalogue/arenamodel/{source.pk}/merge/").content.decode()
    assert f"{shown.display_name} ({shown.key})" in page
    assert f"({hidden.key})</option>" not in page
    assert f"Merge “{source.display_name}” into another model" in page
    assert page.count(f"<h1>Merge “{source.display_name}”") == 1
    page = cat.get(f"/admin/catalogue/arenamodel/{source.pk}/merge/?hidden=1").content.decode()
    assert f"{hidden.display_name} ({hidden.key})</option>" in page
