"""Who may see and do what in the admin: anonymous, plain staff, both groups, superuser."""

from __future__ import annotations

import io

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.management import call_command
from django.test import Client

from catalogue.models import ArenaModel
from core.models import ApiClient, AuditEntry
from ingest.models import Battle
from tests.moderation.conftest import logged_in

M, C, S = "moderator", "cataloguer", "superuser"
PAGES = {
    # url (with {pk} = a model's pk): roles that may open it
    "/admin/ingest/battle/": {M, S},
    "/admin/ingest/battle/moderate-user/": {M, S},
    "/admin/ingest/battle/moderate-range/": {M, S},
    "/admin/ingest/completionlog/": {M, S},
    "/admin/moderation/anomalyreport/": {M, S},
    "/admin/core/auditentry/": {M, C, S},
    "/admin/core/auditentry/export.csv": {M, C, S},
    "/admin/leaderboard/snapshot/": {M, C, S},
    "/admin/leaderboard/snapshot/recompute/": {M, C, S},
    "/admin/catalogue/arenamodel/": {C, S},
    "/admin/catalogue/arenamodel/add/": {C, S},
    "/admin/catalogue/arenamodel/{pk}/change/": {C, S},
    "/admin/catalogue/arenamodel/{pk}/merge/": {C, S},
    "/admin/catalogue/modelalias/": {C, S},
    "/admin/core/apiclient/": {C, S},
    "/admin/core/apiclient/add/": {C, S},
}


@pytest.fixture
def data(db):
    call_command("simulate_battles", "--battles", "300", "--seed", "2", stdout=io.StringIO())
    return ArenaModel.objects.get(key="codestral-2405")


@pytest.mark.parametrize("role", [None, "plain_staff", M, C, S])
def test_every_admin_page(role, request, data):
    client = Client() if role is None else logged_in(request.getfixturevalue(role))
    for url, allowed in PAGES.items():
        r = client.get(url.format(pk=data.pk))
        if role is None:
            assert r.status_code == 302 and "/admin/login/" in r["Location"], url
        elif role in allowed:
            assert r.status_code == 200, (role, url, r.status_code)
        else:
            assert r.status_code == 403, (role, url, r.status_code)
    if role is not None:
        assert client.get("/admin/").status_code == 200


def test_rating_config_opens_its_single_row(request, data):
    client = logged_in(request.getfixturevalue(C))
    r = client.get("/admin/leaderboard/ratingconfig/", follow=True)
    assert r.status_code == 200 and b"Reason for this change" in r.content


def exclude_post(client, ids, reason="spam"):
    return client.post(
        "/admin/ingest/battle/",
        {
            "action": "exclude_battles",
            ACTION_CHECKBOX_NAME: ids,
            "index": 0,
            "apply": "1",
            "reason": reason,
        },
    )


def test_moderator_excludes_with_a_reason_cataloguer_cannot(request, data):
    ids = list(Battle.objects.values_list("id", flat=True)[:5])
    cat = logged_in(request.getfixturevalue(C))
    assert exclude_post(cat, ids).status_code == 403
    mod = logged_in(request.getfixturevalue(M))
    r = mod.post(
        "/admin/ingest/battle/",
        {"action": "exclude_battles", ACTION_CHECKBOX_NAME: ids, "index": 0},
    )
    assert r.status_code == 200 and b"Reason" in r.content  # the intermediate page asks for it
    assert not Battle.objects.filter(excluded=True).exists()
    r = exclude_post(mod, ids, reason="")
    assert not Battle.objects.filter(excluded=True).exists()
    r = exclude_post(mod, ids, reason="coordinated spam")
    assert r.status_code == 302
    assert Battle.objects.filter(excluded=True).count() == 5
    entry = AuditEntry.objects.get()
    assert (entry.actor_name, entry.action, entry.reason, entry.affected) == (
        "mod",
        "exclude battles",
        "coordinated spam",
        5,
    )


def test_exclude_a_user_from_the_form(request, data):
    mod = logged_in(request.getfixturevalue(M))
    user = Battle.objects.values_list("user_hash", flat=True).first()
    own = Battle.objects.filter(user_hash=user).count()
    r = mod.post(
        "/admin/ingest/battle/moderate-user/",
        {"mode": "exclude", "user_hash": user, "reason": "bot"},
    )
    assert r.status_code == 302
    assert Battle.objects.filter(excluded=True).count() == own
    r = mod.post(
        "/admin/ingest/battle/moderate-user/",
        {"mode": "exclude", "user_hash": "nothex", "reason": "bot"},
    )
    assert r.status_code == 200 and b"64 hexadecimal" in r.content


def test_catalogue_change_needs_a_reason_and_is_audited(request, data):
    cat = logged_in(request.getfixturevalue(C))
    url = f"/admin/catalogue/arenamodel/{data.pk}/change/"
    form = {
        "key": data.key,
        "display_name": data.display_name,
        "organization": data.organization,
        "license": data.license,
        "style": data.style,
        "visibility": "hidden",
        "description": "",
        "aliases-TOTAL_FORMS": 0,
        "aliases-INITIAL_FORMS": 0,
        "aliases-MIN_NUM_FORMS": 0,
        "aliases-MAX_NUM_FORMS": 1000,
    }
    r = cat.post(url, form)
    assert r.status_code == 200 and b"This field is required" in r.content
    data.refresh_from_db()
    assert data.visibility == "public"
    r = cat.post(url, {**form, "audit_reason": "licence dispute"})
    assert r.status_code == 302
    data.refresh_from_db()
    assert data.visibility == "hidden"
    entry = AuditEntry.objects.get()
    assert entry.action == "change model" and entry.reason == "licence dispute"
    assert entry.before == {"visibility": "public"} and entry.after == {"visibility": "hidden"}


def test_api_key_is_shown_once_and_revocation_is_audited(request, data):
    cat = logged_in(request.getfixturevalue(C))
    r = cat.post(
        "/admin/core/apiclient/add/",
        {"name": "ci bot", "rate_limit_per_minute": "", "audit_reason": "CI"},
        follow=True,
    )
    key = (
        next(m.message for m in r.context["messages"] if "API key" in m.message)
        .split(": ")[1]
        .split(" ")[0]
    )
    client = ApiClient.objects.get(name="ci bot")
    assert key.startswith("arena_") and key not in (client.key_hash, client.key_prefix)
    page = cat.get(f"/admin/core/apiclient/{client.pk}/change/").content.decode()
    assert key not in page
    r = cat.post(
        "/admin/core/apiclient/",
        {
            "action": "revoke",
            ACTION_CHECKBOX_NAME: [client.pk],
            "index": 0,
            "apply": "1",
            "reason": "leaked",
        },
    )
    client.refresh_from_db()
    assert client.revoked_at is not None
    assert AuditEntry.objects.filter(action="revoke api key", reason="leaked").exists()


def test_recompute_now_button(request, data):
    mod = logged_in(request.getfixturevalue(M))
    r = mod.post("/admin/leaderboard/snapshot/recompute/")
    assert r.status_code == 302
    # the test settings use a real broker: the task is queued, the page says so
    page = mod.get("/admin/leaderboard/snapshot/recompute/").content.decode()
    assert "queued" in page or "done" in page
    assert AuditEntry.objects.filter(action="recompute now").exists()


def test_audit_log_is_read_only_and_exports_csv(request, data, moderator):
    from moderation.services import set_excluded

    set_excluded(
        battles=Battle.objects.none(),
        exclude=True,
        reason="nothing",
        actor=moderator,
        target="none",
    )
    su = logged_in(request.getfixturevalue(S))
    entry = AuditEntry.objects.get()
    r = su.get(f"/admin/core/auditentry/{entry.pk}/change/")
    assert r.status_code == 200 and b'name="reason"' not in r.content  # no editable field
    assert su.post(f"/admin/core/auditentry/{entry.pk}/delete/").status_code == 403
    csv_text = su.get("/admin/core/auditentry/export.csv").content.decode()
    assert csv_text.splitlines()[0] == "at,actor_name,action,target,reason,affected,before,after"
    assert "exclude battles" in csv_text and "nothing" in csv_text


def test_csrf_protection_stays_on(request, data):
    client = Client(enforce_csrf_checks=True)
    client.force_login(request.getfixturevalue(M))
    user = Battle.objects.values_list("user_hash", flat=True).first()
    r = client.post(
        "/admin/ingest/battle/moderate-user/", {"mode": "exclude", "user_hash": user, "reason": "x"}
    )
    assert r.status_code == 403
    assert not Battle.objects.filter(excluded=True).exists()


def test_bootstrap_roles_command(db, monkeypatch):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    monkeypatch.setenv("ARENA_ADMIN_USERNAME", "boss")
    monkeypatch.setenv("ARENA_ADMIN_PASSWORD", "s3cret-pass")
    out = io.StringIO()
    call_command("bootstrap_roles", stdout=out)
    assert set(Group.objects.values_list("name", flat=True)) == {"Moderators", "Catalogue admins"}
    boss = get_user_model().objects.get(username="boss")
    assert boss.is_superuser and boss.check_password("s3cret-pass")
    assert "s3cret-pass" not in out.getvalue()
    call_command("bootstrap_roles", stdout=io.StringIO())  # idempotent
    assert Group.objects.count() == 2
