"""Request shapes of the extension's account routes (`/users`, `/users/authenticate`, `/user_scores`)."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from core.fields import IdentifierField, StrictCharField

USERNAME_RE = r"^[A-Za-z0-9][A-Za-z0-9_.-]{2,31}$"
# What the extension's Register form sends (all optional); nothing else is kept.
METADATA_KEYS = ("jobTitle", "industrySector", "yearsOfExperience", "codingHoursPerWeek")


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
    metadata = serializers.DictField(required=False, allow_null=True)

    def validate_password(self, value: str | None) -> str | None:
        if value and len(value) < 8:
            raise serializers.ValidationError("At least 8 characters (or none at all).")
        return value or None

    def validate_metadata(self, value: dict[str, object] | None) -> dict[str, object] | None:
        if value is None:
            return None
        unknown = sorted(set(value) - set(METADATA_KEYS))
        if unknown:
            raise serializers.ValidationError(
                f"Unknown key(s) {', '.join(unknown)}; allowed: {', '.join(METADATA_KEYS)}."
            )
        for key, item in value.items():
            if item is not None and not isinstance(item, str | int | float):
                raise serializers.ValidationError(f"{key}: must be text or a number.")
            if isinstance(item, str) and len(item) > 100:
                raise serializers.ValidationError(f"{key}: at most 100 characters.")
        return {k: v for k, v in value.items() if v not in (None, "")}


class AuthenticateSerializer(_UserBase):
    username = StrictCharField(max_length=32, required=False, allow_blank=True, default="")
