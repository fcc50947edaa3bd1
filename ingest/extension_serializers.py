"""Request shapes of the public Copilot Arena extension's routes (field names as it sends them).

The extension spreads whatever `/create_pair` returned into each item, so items carry many
fields; only the ones read here matter and the rest are ignored. Code fields (`prompt`,
`completion`, `prefix`, `suffix`, `response`, `codeToEdit`, `userInput`) are read for
labelling and kept only under Research privacy.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from catalogue.fields import ModelKeyField
from core.fields import (
    FiniteFloatField,
    IdentifierField,
    PromptField,
    StrictCharField,
    StrictIntegerField,
)

from .fields import code_field, latency_field
from .models import BattleKind, BattleSource, Outcome, Privacy
from .serializers import MAX_CHARS_COUNT
from .votes import CodeIn, CompletionIn, VoteIn

_id: dict[str, Any] = {"max_length": 128}


def _pair_items(items: list[dict[str, Any]], field: str) -> list[dict[str, Any]]:
    """Two items of different models, ordered by `pairIndex` when both carry it (0 = top)."""
    if len(items) != 2:
        raise serializers.ValidationError(
            {field: [f"Must hold exactly 2 items, got {len(items)}."]}
        )
    indexes = [item.get("pairIndex") for item in items]
    if None not in indexes:
        if sorted(int(i) for i in indexes if i is not None) != [0, 1]:
            raise serializers.ValidationError(
                {field: ["pairIndex must be 0 for one item and 1 for the other."]}
            )
        items = sorted(items, key=lambda item: int(item["pairIndex"]))
    if items[0]["model"].id == items[1]["model"].id:
        raise serializers.ValidationError(
            {
                field: [
                    f"The two items must be different models (both are '{items[0]['model'].key}')."
                ]
            },
            code="same_model",
        )
    return items


def _chars(item: dict[str, Any], text_key: str, length_key: str) -> int | None:
    text = item.get(text_key) or ""
    if text:
        return len(text)
    return item.get(length_key)


class CompletionItemSerializer(serializers.Serializer[Any]):
    completionId = IdentifierField(**_id)
    model = ModelKeyField()
    userId = IdentifierField(max_length=256, required=False)
    timestamp = FiniteFloatField(required=False)
    pairIndex = StrictIntegerField(required=False, min_value=0, max_value=1)
    pairCompletionId = IdentifierField(required=False, allow_blank=True, **_id)
    latency = latency_field(unit="s")
    prompt = code_field(field=PromptField)
    completion = code_field()
    prefix = code_field()
    suffix = code_field()
    # Bounded like the native API's counts: the column is a 32-bit integer (schemathesis
    # found 2**31 answered 500).
    prefix_length = StrictIntegerField(required=False, min_value=0, max_value=MAX_CHARS_COUNT)
    suffix_length = StrictIntegerField(required=False, min_value=0, max_value=MAX_CHARS_COUNT)


class EditItemSerializer(serializers.Serializer[Any]):
    responseId = IdentifierField(**_id)
    model = ModelKeyField()
    userId = IdentifierField(max_length=256, required=False)
    timestamp = FiniteFloatField(required=False)
    pairIndex = StrictIntegerField(required=False, min_value=0, max_value=1)
    latency = latency_field(unit="s")
    prompt = code_field(field=PromptField)
    response = code_field()
    prefix = code_field()
    suffix = code_field()
    codeToEdit = code_field()
    userInput = code_field()
    language = StrictCharField(max_length=64, required=False, allow_blank=True)


class _OutcomeBase(serializers.Serializer[Any]):
    pairId = IdentifierField(**_id)
    userId = IdentifierField(max_length=256)
    version = StrictCharField(max_length=64, allow_blank=True)
    privacy = serializers.ChoiceField(choices=Privacy.values)
    fileType = StrictCharField(max_length=64, required=False, allow_blank=True, default="")
    repoUrl = StrictCharField(
        max_length=2048, required=False, allow_blank=True, allow_null=True, default=""
    )
    username = StrictCharField(max_length=256, required=False, allow_blank=True)

    @classmethod
    def vote_from(cls, d: dict[str, Any]) -> VoteIn:
        """The vote of validated data (`validated_data`, or ingest.validation's result)."""
        raise NotImplementedError


def _extension_vote(
    d: dict[str, Any],
    top: dict[str, Any],
    bottom: dict[str, Any],
    *,
    answer: str,
    code: dict[str, str] | None = None,
    **route: Any,
) -> VoteIn:
    """The vote of an extension route: what both routes read alike, plus ``route``'s own.
    Its code: the top item's context, each item's ``answer`` field, and ``code``."""
    return VoteIn(
        pair_id=d["pairId"],
        user_id=d["userId"],
        model_a_id=top["model"].id,
        model_b_id=bottom["model"].id,
        privacy=d["privacy"],
        source=BattleSource.EXTENSION,
        latency_a_ms=_latency_ms(top),
        latency_b_ms=_latency_ms(bottom),
        client_version=d["version"],
        code=CodeIn(
            prefix=top["prefix"],
            suffix=top["suffix"],
            completion_a=top[answer],
            completion_b=bottom[answer],
            repo_url=d["repoUrl"] or "",
            **(code or {}),
        ),
        **route,
    )


def _latency_ms(item: dict[str, Any]) -> float | None:
    return None if item.get("latency") is None else item["latency"] * 1000.0


class CompletionOutcomeSerializer(_OutcomeBase):
    """`PUT /add_completion_outcome`: acceptedIndex 0 = top item won, 1 = bottom won."""

    acceptedIndex = StrictIntegerField(min_value=0, max_value=1)
    completionItems = CompletionItemSerializer(many=True, allow_empty=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs["completionItems"] = _pair_items(attrs["completionItems"], "completionItems")
        return attrs

    @classmethod
    def vote_from(cls, d: dict[str, Any]) -> VoteIn:
        top, bottom = d["completionItems"]
        return _extension_vote(
            d,
            top,
            bottom,
            outcome=Outcome.A if d["acceptedIndex"] == 0 else Outcome.B,
            kind=BattleKind.COMPLETION,
            file_type=d["fileType"],
            prefix_chars=_chars(top, "prefix", "prefix_length"),
            suffix_chars=_chars(top, "suffix", "suffix_length"),
            answer="completion",
        )


class EditOutcomeSerializer(_OutcomeBase):
    """`PUT /add_edit_outcome`: acceptedIndex 0 = top, 1 = bottom, -2 = both bad."""

    acceptedIndex = StrictIntegerField()
    responseItems = EditItemSerializer(many=True, allow_empty=False)

    def validate_acceptedIndex(self, value: int) -> int:
        if value not in (0, 1, -2):
            raise serializers.ValidationError(
                "Must be 0 (top won), 1 (bottom won) or -2 (both bad)."
            )
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs["responseItems"] = _pair_items(attrs["responseItems"], "responseItems")
        return attrs

    @classmethod
    def vote_from(cls, d: dict[str, Any]) -> VoteIn:
        top, bottom = d["responseItems"]
        outcome = {0: Outcome.A, 1: Outcome.B, -2: Outcome.BOTH_BAD}[d["acceptedIndex"]]
        return _extension_vote(
            d,
            top,
            bottom,
            outcome=outcome,
            kind=BattleKind.EDIT,
            file_type=d["fileType"] or top.get("language", ""),
            prefix_chars=len(top["prefix"]) or None,
            suffix_chars=len(top["suffix"]) or None,
            answer="response",
            code={"code_to_edit": top["codeToEdit"], "user_input": top["userInput"]},
        )


class AddCompletionSerializer(CompletionItemSerializer):
    """`PUT /add_completion`: one shown completion with its latency."""

    userId = IdentifierField(max_length=256)
    pairIndex = StrictIntegerField(min_value=0, max_value=1)
    pairCompletionId = IdentifierField(allow_blank=True, **_id)
    version = StrictCharField(max_length=64, allow_blank=True)
    privacy = serializers.ChoiceField(choices=Privacy.values)
    fileType = StrictCharField(max_length=64, required=False, allow_blank=True, default="")
    pairId = IdentifierField(required=False, allow_blank=True, **_id)

    @staticmethod
    def completion_from(d: dict[str, Any]) -> CompletionIn:
        return CompletionIn(
            completion_id=d["completionId"],
            model_id=d["model"].id,
            user_id=d["userId"],
            privacy=d["privacy"],
            pair_completion_id=d["pairCompletionId"],
            pair_id=d.get("pairId", ""),
            pair_index=d["pairIndex"],
            latency_ms=None if d["latency"] is None else d["latency"] * 1000.0,
            file_type=d["fileType"],
            client_version=d["version"],
            prompt=d["prompt"],
            completion=d["completion"],
        )


class SingleOutcomeSerializer(CompletionItemSerializer):
    """`PUT /add_single_outcome`: the one shown completion was accepted.

    The extension sends no `privacy` on this route; without one it is treated as Private,
    so no code is kept.
    """

    userId = IdentifierField(max_length=256)
    version = StrictCharField(max_length=64, allow_blank=True)
    privacy = serializers.ChoiceField(choices=Privacy.values, default=Privacy.PRIVATE)


class UserIdSerializer(serializers.Serializer[Any]):
    userId = IdentifierField(max_length=256)
