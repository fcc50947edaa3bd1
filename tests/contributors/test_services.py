"""`PUT /users`, `PATCH /users`, `POST /users/authenticate`, `DELETE /users`: what the
extension's panel does, and what the reference server's account routes do."""

from __future__ import annotations

import json

import pytest

from contributors.models import Contributor
from ingest.models import Battle
from ingest.pseudonyms import pseudonymise_user
from tests.ingest.payloads import outcome_payload

# As the extension's Register form sends it (yearsOfExperience through parseInt).
META = {"jobTitle": "Data engineer", "industrySector": "Finance", "yearsOfExperience": 7}


def call(api, method: str, path: str, body: dict):
    return getattr(api, method)(path, data=json.dumps(body), content_type="application/json")


def register(api, user_id="machine-1", username="alice", **extra):
    return call(api, "put", "/users", {"userId": user_id, "username": username, **extra})


def authenticate(api, user_id="machine-1", username="", **extra):
    return call(
        api, "post", "/users/authenticate", {"userId": user_id, "username": username, **extra}
    )


def test_register_as_the_form_does_then_the_panel_finds_the_user(api, db):
    r = register(api, metadata=META)
    assert r.status_code == 200 and r.json()["username"] == "alice"
    row = Contributor.objects.get()
    assert row.user_hash == pseudonymise_user("machine-1") and row.metadata == META
    assert not row.password
    assert "machine-1" not in json.dumps(list(Contributor.objects.values()), default=str)
    # On start the panel authenticates with the machine id and an empty username.
    r = authenticate(api)
    assert r.status_code == 200
    user = r.json()["user"]
    assert user["username"] == "alice" and user["personalUrl"].startswith("/me/")
    assert "metadata" not in json.dumps(r.json()) and "Data engineer" not in r.content.decode()


def test_taken_usernames_are_409_case_insensitively(api, db):
    assert register(api).status_code == 200
    r = register(api, user_id="machine-2", username="ALICE")
    assert r.status_code == 409 and "taken" in r.json()["message"]
    assert Contributor.objects.count() == 1
    # The same machine may rename itself.
    assert register(api, username="alice2").status_code == 200
    assert Contributor.objects.get().username == "alice2"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"username": "a"}, "username"),
        ({"username": "bad name!"}, "username"),
        ({"username": "x" * 40}, "username"),
        ({"password": "short"}, "password"),
        ({"metadata": {"salary": "1"}}, "metadata"),
        ({"metadata": {"jobTitle": "x" * 200}}, "metadata.jobTitle"),
        ({"metadata": {"jobTitle": ["a"]}}, "metadata.jobTitle"),
        ({"metadata": {"yearsOfExperience": "x"}}, "metadata.yearsOfExperience"),
        ({"metadata": {"codingHoursPerWeek": 500}}, "metadata.codingHoursPerWeek"),
        ({"metadata": "senior"}, "metadata"),
    ],
)
def test_bad_registrations_name_the_field_and_store_nothing(api, db, body, field):
    r = call(api, "put", "/users", {"userId": "m", "username": "alice", **body})
    assert r.status_code == 400 and field in r.json()["fields"]
    assert not Contributor.objects.exists()


def test_unknown_users_get_401(api, db):
    assert authenticate(api, username="nobody").status_code == 401
    assert authenticate(api).status_code == 401


def test_a_password_is_hashed_and_then_required(api, db):
    assert register(api, password="correct horse").status_code == 200
    row = Contributor.objects.get()
    assert row.password.startswith(("pbkdf2_", "argon2", "bcrypt", "scrypt"))
    assert "correct horse" not in row.password
    assert authenticate(api).status_code == 401
    assert authenticate(api, password="wrong one!").status_code == 401
    assert authenticate(api, password="correct horse").status_code == 200
    # Another machine knowing the username and password is let in, without the private link.
    r = authenticate(api, user_id="laptop-2", username="alice", password="correct horse")
    assert r.status_code == 200 and "personalUrl" not in r.json()["user"]
    # Changing the account needs the password too.
    assert register(api, username="alice3").status_code == 401
    assert register(api, username="alice3", password="correct horse").status_code == 200


def test_by_username_only_a_passwordless_account_gives_no_private_link(api, db):
    register(api)
    r = authenticate(api, user_id="someone-else", username="alice")
    assert r.status_code == 200 and "personalUrl" not in r.json()["user"]


def test_deleting_the_account_keeps_the_votes(api, models):
    register(api, user_id="vscode-machine-id", metadata=META)
    assert call(api, "put", "/add_completion_outcome", outcome_payload()).status_code == 200
    assert (
        call(api, "delete", "/users", {"userId": "someone-else", "username": "alice"}).status_code
        == 401
    )
    r = call(api, "delete", "/users", {"userId": "vscode-machine-id", "username": ""})
    assert r.status_code == 204
    assert not Contributor.objects.exists()
    assert Battle.objects.filter(user_hash=pseudonymise_user("vscode-machine-id")).count() == 1


def test_account_routes_are_rate_limited(api, db, settings):
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES, "account_ip": "3/hour"}
    codes = [authenticate(api, user_id=f"m{i}").status_code for i in range(4)]
    assert codes == [401, 401, 401, 429]


def patch(api, **body):
    return call(api, "patch", "/users", {"userId": "machine-1", "username": "alice", **body})


def test_patch_changes_metadata_from_the_owning_machine_only(api, db):
    register(api, metadata=META)
    r = patch(api, metadata={"jobTitle": "Researcher", "codingHoursPerWeek": "20"})
    assert r.status_code == 200 and r.json() == {"message": "User updated successfully"}
    assert Contributor.objects.get().metadata == {
        "jobTitle": "Researcher",
        "codingHoursPerWeek": 20,
    }
    # A passwordless account is proved by its machine only, as for DELETE.
    r = patch(api, userId="another-machine", metadata={"jobTitle": "Intruder"})
    assert r.status_code == 401
    assert Contributor.objects.get().metadata["jobTitle"] == "Researcher"


def test_patch_sets_then_requires_the_password(api, db):
    register(api)
    assert patch(api, newPassword="s3cret-pass").status_code == 200
    assert authenticate(api, user_id="elsewhere", username="alice").status_code == 401
    assert (
        authenticate(api, user_id="elsewhere", username="alice", password="s3cret-pass").status_code
        == 200
    )
    r = patch(api, userId="elsewhere", oldPassword="wrong-pass", newPassword="another-pass")
    assert r.status_code == 401
    r = patch(api, userId="elsewhere", oldPassword="s3cret-pass", newPassword="another-pass")
    assert r.status_code == 200
    assert (
        authenticate(api, user_id="x", username="alice", password="another-pass").status_code == 200
    )


@pytest.mark.parametrize(
    "body, status, field",
    [
        ({"username": "nobody"}, 404, "username"),
        ({"newPassword": "short"}, 400, "newPassword"),
        ({"metadata": {"yearsOfExperience": "x"}}, 400, "metadata.yearsOfExperience"),
        ({"metadata": {"salary": 1}}, 400, "metadata"),
    ],
)
def test_bad_patches_name_the_field_and_change_nothing(api, db, body, status, field):
    register(api, metadata=META)
    r = patch(api, **body)
    assert r.status_code == status and field in r.json()["fields"]
    row = Contributor.objects.get()
    assert row.metadata == META and not row.password
