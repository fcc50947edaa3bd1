"""Request shapes of the extension's account routes (`/users`, `/users/authenticate`, `/user_scores`)."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from core.fields import IdentifierField, StrictCharField

USERNAME_RE = r"^[A-Za-z0-9][A-Za-z0-9_.-]{2,31}$"
# What the extension's Register form sends (all optional); nothing else is kept.
METADATA_KEYS = ("jobTitle", "industrySector", "yearsOfExperience", "codingHoursPerWeek")


class MetadataSerializer(serializers.Serializer[Any]):
    """The Register form's optional fields, typed as the reference server types them."""

    jobTitle = StrictCharField(max_length=100, required=False, allow_null=True, allow_blank=True)
    industrySector = StrictCharField(
        max_length=100, required=False, allow_null=True, allow_blank=True
    )
    yearsOfExperience = serializers.IntegerField(
        min_value=0, max_value=80, required=False, allow_null=True
    )
    codingHoursPerWeek = serializers.IntegerField(
        min_value=0, max_value=168, required=False, allow_null=True
    )

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError(
                f"Must be an object with any of {', '.join(METADATA_KEYS)}."
            )
        unknown = sorted(set(data) - set(METADATA_KEYS))
        if unknown:
            raise serializers.ValidationError(
                f"Unknown key(s) {', '.join(unknown)}; allowed: {', '.join(METADATA_KEYS)}."
            )
        return super().to_internal_value(data)


def _new_password(value: str | None) -> str | None:
    if value and len(value) < 8:
        raise serializers.ValidationError("At least 8 characters (or none at all).")
    return value or None


def _kept(value: dict[str, object] | None) -> dict[str, object] | None:
    """The metadata to store: the fields given a value (None: metadata not sent)."""
    if value is None:
        return None
    return {k: v for k, v in value.items() if v not in (None, "")}


class _UserBase(serializers.Serializer[Any]):
    userId = IdentifierField(max_length=256)
    password = StrictCharField(
        max_length=128, required=False, allow_null=True, allow_blank=True, trim_whitespace=False
    )


class RegisterSerializer(_UserBase):
    username = StrictCharField(
        validators=[
            RegexValidator(
                USERNAME_RE,
                "3-32 characters: letters, digits and . _ - (starting with a letter or digit).",
            )
        ]
    )
    metadata = MetadataSerializer(required=False, allow_null=True)

    def validate_password(self, value: str | None) -> str | None:
        return _new_password(value)

    def validate_metadata(self, value: dict[str, object] | None) -> dict[str, object] | None:
        return _kept(value)


class UpdateUserSerializer(serializers.Serializer[Any]):
    """`PATCH /users`, as the reference server names it: the account is found by username;
    `oldPassword` proves it when it has one; a new password and/or new metadata."""

    userId = IdentifierField(max_length=256)
    username = StrictCharField(max_length=32)
    oldPassword = StrictCharField(
        max_length=128, required=False, allow_null=True, allow_blank=True, trim_whitespace=False
    )
    newPassword = StrictCharField(
        max_length=128, required=False, allow_null=True, allow_blank=True, trim_whitespace=False
    )
    metadata = MetadataSerializer(required=False, allow_null=True)

    def validate_newPassword(self, value: str | None) -> str | None:
        return _new_password(value)

    def validate_metadata(self, value: dict[str, object] | None) -> dict[str, object] | None:
        return _kept(value)


class AuthenticateSerializer(_UserBase):
    username = StrictCharField(max_length=32, required=False, allow_blank=True, default="")
