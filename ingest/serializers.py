"""Request shapes of the native v1 ingest API, validated into `VoteIn` values."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from catalogue.fields import ModelKeyField
from core.fields import IdentifierField, StrictCharField, StrictIntegerField

from .fields import code_field, latency_field
from .models import BattleKind, BattleSource, Outcome, Privacy
from .votes import CodeIn, VoteIn

OUTCOME_NAMES = {
    "model_a": Outcome.A,
    "model_b": Outcome.B,
    "tie": Outcome.TIE,
    "both_bad": Outcome.BOTH_BAD,
}
MAX_CHARS_COUNT = 100_000_000


def check_distinct(attrs: dict[str, Any], a: str, b: str) -> None:
    if attrs[a].id == attrs[b].id:
        raise serializers.ValidationError(
            {b: [f"Must be a different model from {a} (both are '{attrs[a].key}')."]},
            code="same_model",
        )


class BattleSerializer(serializers.Serializer[Any]):
    """One vote. `model_a` is the completion shown on top, `model_b` the bottom one."""

    pair_id = IdentifierField(max_length=128)
    # Without one the battle is stored without a user: an independent vote in the intervals.
    user_id = IdentifierField(max_length=256, required=False, allow_blank=True, default="")
    model_a = ModelKeyField()
    model_b = ModelKeyField()
    outcome = serializers.ChoiceField(choices=list(OUTCOME_NAMES))
    kind = serializers.ChoiceField(choices=BattleKind.values, default=BattleKind.COMPLETION)
    privacy = serializers.ChoiceField(choices=Privacy.values)
    file_type = StrictCharField(max_length=64, required=False, allow_blank=True, default="")
    latency_a_ms = latency_field(unit="ms")
    latency_b_ms = latency_field(unit="ms")
    prefix_chars = StrictIntegerField(
        required=False, allow_null=True, default=None, min_value=0, max_value=MAX_CHARS_COUNT
    )
    suffix_chars = StrictIntegerField(
        required=False, allow_null=True, default=None, min_value=0, max_value=MAX_CHARS_COUNT
    )
    # For clients that send lengths without the code; a completion's text, when sent, wins.
    completion_a_chars = StrictIntegerField(
        required=False, allow_null=True, default=None, min_value=0, max_value=MAX_CHARS_COUNT
    )
    completion_b_chars = StrictIntegerField(
        required=False, allow_null=True, default=None, min_value=0, max_value=MAX_CHARS_COUNT
    )
    client_version = StrictCharField(max_length=64, required=False, allow_blank=True, default="")
    prefix = code_field(help_text="Stored only when privacy is Research.")
    suffix = code_field(help_text="Stored only when privacy is Research.")
    completion_a = code_field(help_text="Stored only when privacy is Research.")
    completion_b = code_field(help_text="Stored only when privacy is Research.")
    code_to_edit = code_field(help_text="Edit battles; stored only when privacy is Research.")
    user_input = code_field(help_text="Edit battles; stored only when privacy is Research.")
    repo_url = StrictCharField(max_length=2048, required=False, allow_blank=True, default="")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        check_distinct(attrs, "model_a", "model_b")
        return attrs

    @staticmethod
    def vote_from(d: dict[str, Any], *, source: str = BattleSource.API) -> VoteIn:
        """The vote of validated data (`validated_data`, or ingest.validation's result)."""
        prefix, suffix = d["prefix"], d["suffix"]
        return VoteIn(
            pair_id=d["pair_id"],
            user_id=d["user_id"],
            model_a_id=d["model_a"].id,
            model_b_id=d["model_b"].id,
            outcome=OUTCOME_NAMES[d["outcome"]],
            kind=d["kind"],
            privacy=d["privacy"],
            source=source,
            file_type=d["file_type"],
            latency_a_ms=d["latency_a_ms"],
            latency_b_ms=d["latency_b_ms"],
            prefix_chars=d["prefix_chars"]
            if d["prefix_chars"] is not None
            else len(prefix) or None,
            suffix_chars=d["suffix_chars"]
            if d["suffix_chars"] is not None
            else len(suffix) or None,
            completion_a_chars=d["completion_a_chars"],
            completion_b_chars=d["completion_b_chars"],
            client_version=d["client_version"],
            code=CodeIn(
                prefix=prefix,
                suffix=suffix,
                completion_a=d["completion_a"],
                completion_b=d["completion_b"],
                code_to_edit=d["code_to_edit"],
                user_input=d["user_input"],
                repo_url=d["repo_url"],
            ),
        )


class BattleBatchSerializer(serializers.Serializer[Any]):
    """Schema of a batch; items are validated one by one so errors carry their index."""

    battles = BattleSerializer(many=True)


class BattleCreatedSerializer(serializers.Serializer[Any]):
    status = serializers.ChoiceField(choices=["created", "duplicate"])
    pair_id = StrictCharField()
    battle_id = serializers.IntegerField()


class BatchResultSerializer(serializers.Serializer[Any]):
    created = serializers.IntegerField()
    duplicates = serializers.IntegerField()
