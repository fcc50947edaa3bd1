"""Writes of contributors: register a username for an extension user, authenticate, delete.

Follows what the extension expects of the original server: `PUT /users` registers (409 when
the username is taken), `PATCH /users` changes the password or the metadata, `POST /users/authenticate` looks the user up by machine id first, then
by username, accepts a user without a password and otherwise checks it. Passwords are hashed
with Django's hashers. The private page link is only ever given to the machine that owns the
account (matched by its id), never to someone who only knows the username.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth.hashers import check_password, make_password
from django.db import IntegrityError, transaction
from django.urls import reverse

from core.errors import ApplicationError, Conflict
from ingest.pseudonyms import pseudonymise_user

from .models import Contributor
from .selectors import contributor_by_username


class UsernameTaken(Conflict):
    def __init__(self, username: str):
        super().__init__(
            f"The username '{username}' is taken; choose another.",
            fields={"username": ["Already taken."]},
        )


class NotAuthenticated(ApplicationError):
    status = 401
    code = "not_authenticated"

    def __init__(self) -> None:
        super().__init__("Invalid username or password.")


@dataclass(frozen=True)
class Authenticated:
    contributor: Contributor
    own_machine: bool  # matched by the caller's machine id, not only by the username

    def answer(self) -> dict[str, object]:
        user: dict[str, str] = {"username": self.contributor.username}
        if self.own_machine:
            user["personalUrl"] = reverse("contributor-private", args=[self.contributor.page_token])
        return {"message": "Authentication successful", "user": user}


def register(
    *, user_id: str, username: str, password: str | None, metadata: dict[str, object] | None
) -> Contributor:
    """Create the account of this machine's user, or update it (a set password must be given)."""
    user_hash = pseudonymise_user(user_id)
    with transaction.atomic():
        mine = Contributor.objects.select_for_update().filter(user_hash=user_hash).first()
        other = contributor_by_username(username=username)
        if other is not None and (mine is None or other.pk != mine.pk):
            raise UsernameTaken(username)
        if mine is None:
            mine = Contributor(user_hash=user_hash, page_token=secrets.token_urlsafe(18))
        elif mine.password and not (password and check_password(password, mine.password)):
            raise NotAuthenticated()
        mine.username = username
        if password:
            mine.password = make_password(password)
        if metadata is not None:
            mine.metadata = metadata
        try:
            with transaction.atomic():
                mine.save()
        except IntegrityError:  # a concurrent registration took the name
            raise UsernameTaken(username) from None
    return mine


def authenticate(*, user_id: str, username: str, password: str | None) -> Authenticated:
    mine = Contributor.objects.filter(user_hash=pseudonymise_user(user_id)).first()
    found = mine or contributor_by_username(username=username)
    if found is None:
        raise NotAuthenticated()
    if found.password and not (password and check_password(password, found.password)):
        raise NotAuthenticated()
    return Authenticated(contributor=found, own_machine=mine is not None)


class NoSuchUser(ApplicationError):
    status = 404
    code = "not_found"

    def __init__(self, username: str) -> None:
        super().__init__(f"No user named '{username}'.", fields={"username": ["No such user."]})


def update_account(
    *,
    user_id: str,
    username: str,
    old_password: str | None,
    new_password: str | None,
    metadata: dict[str, object] | None,
) -> Contributor:
    """`PATCH /users`: a new password and/or new metadata for the account named `username`.

    As the reference server: found by username (404 otherwise); an account with a password
    needs `old_password` (401 otherwise). An account without one may be changed only from
    its own machine, as for deleting it. Metadata sent replaces the stored metadata.
    """
    with transaction.atomic():
        found = contributor_by_username(username=username)
        if found is None:
            raise NoSuchUser(username)
        found = Contributor.objects.select_for_update().get(pk=found.pk)
        if found.password:
            if not (old_password and check_password(old_password, found.password)):
                raise NotAuthenticated()
        elif found.user_hash != pseudonymise_user(user_id):
            raise NotAuthenticated()
        if new_password:
            found.password = make_password(new_password)
        if metadata is not None:
            found.metadata = metadata
        found.save()
    return found


def delete_account(*, user_id: str, username: str, password: str | None) -> None:
    """Delete the account (username, password, metadata). The votes stay, pseudonymous."""
    auth = authenticate(user_id=user_id, username=username, password=password)
    if not (auth.own_machine or auth.contributor.password):
        # Without a password only the owning machine may delete a passwordless account.
        raise NotAuthenticated()
    auth.contributor.delete()
