"""Request shapes of `/create_pair` and `/create_edit_pair`, with the extension's field names.

Fields the extension sends and the server does not need (``midSpan``; ``maxLines`` on
edits) are accepted and ignored. ``prefix`` and ``suffix`` have no length limit of their
own -- the body limit (``ARENA_MAX_BODY_BYTES``) bounds them -- because the extension sends
the whole file and the server trims it to the token budget.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, TypedDict

from rest_framework import serializers

from core.fields import CodeTextField, FiniteFloatField, StrictIntegerField
from ingest.models import Privacy

from .services import MAX_EDIT_TOKENS, EditPairRequest, PairRequest, edit_too_long


def _context_field(**kwargs: Any) -> CodeTextField:
    # Code: never trimmed of whitespace, may be empty, NULs dropped.
    return CodeTextField(**kwargs)


class _Common(TypedDict):
    """The request fields every pair request has (see `PairRequest`)."""

    pair_id: str
    user_id: str
    prefix: str
    suffix: str
    privacy: str
    model_tags: frozenset[str]


# Validated data: this module's serializers', or the fast validator's with the same fields.
Validated = Mapping[str, Any]


class _PairBase(serializers.Serializer[Any]):
    pairId = serializers.CharField(max_length=128, required=False)
    userId = serializers.CharField(max_length=256)
    prefix = _context_field()
    suffix = _context_field(required=False, default="")
    privacy = serializers.ChoiceField(choices=Privacy.values)
    modelTags = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, default=list, max_length=32
    )

    @staticmethod
    def _common(d: Validated) -> _Common:
        return {
            "pair_id": d.get("pairId") or str(uuid.uuid4()),
            "user_id": d["userId"],
            "prefix": d["prefix"],
            "suffix": d["suffix"],
            "privacy": d["privacy"],
            "model_tags": frozenset(d["modelTags"]),
        }


class CreatePairSerializer(_PairBase):
    """`POST /create_pair`: the extension's CompletionPairRequest."""

    midSpan = serializers.BooleanField(required=False)
    temperature = FiniteFloatField(required=False, min_value=0.0, max_value=2.0, default=0.5)
    maxTokens = StrictIntegerField(required=False, min_value=1, max_value=32768, default=512)
    topP = FiniteFloatField(required=False, min_value=0.0, max_value=1.0, default=0.9)
    maxLines = StrictIntegerField(required=False, min_value=1, max_value=10_000, default=5)

    @classmethod
    def request_from(cls, d: Validated) -> PairRequest:
        """The request from validated data (this serializer's, or the fast validator's)."""
        return PairRequest(
            **cls._common(d),
            max_lines=d["maxLines"],
            max_tokens=d["maxTokens"],
            temperature=d["temperature"],
            top_p=d["topP"],
        )


class CreateEditPairSerializer(_PairBase):
    """`POST /create_edit_pair`: the extension's EditPairRequest."""

    codeToEdit = _context_field()
    userInput = serializers.CharField(max_length=10_000)
    language = serializers.CharField(max_length=64, allow_blank=True)
    maxLines = StrictIntegerField(required=False, min_value=1, max_value=10_000)

    def validate_codeToEdit(self, value: str) -> str:
        if edit_too_long(value):
            raise serializers.ValidationError(
                f"The selection is over {MAX_EDIT_TOKENS:,} estimated tokens "
                "(about 4 bytes each); select less code."
            )
        return value

    @classmethod
    def request_from(cls, d: Validated) -> EditPairRequest:
        """The request from validated data (this serializer's, or the fast validator's)."""
        return EditPairRequest(
            **cls._common(d),
            code_to_edit=d["codeToEdit"],
            user_input=d["userInput"],
            language=d["language"],
        )
