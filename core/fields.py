"""Serializer fields shared by the API routes: strict text and strict numbers.

DRF's own fields coerce: a CharField takes 42 and stores "42", a FloatField takes "0.84".
The schema says string and number, so these take exactly that and refuse the rest with a
400 naming the field (schemathesis checks the two agree: tests/reliability/test_schema_fuzz.py).
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

from rest_framework import serializers


class StrictCharField(serializers.CharField):
    """Text that must arrive as a JSON string (not a number)."""

    default_error_messages = {"not_a_string": "Must be a string."}

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


class IdentifierField(StrictCharField):
    """An identifier (pair, completion, user): kept exactly as sent, so refused if it could alias.

    A plain CharField trims whitespace, which would make "p1\\r" and "p1" the same vote (the
    second answered "duplicate" although the client never sent it); control characters in an
    id only ever come from broken clients and end up in logs and admin search.
    """

    default_error_messages = {
        "surrounding_space": "Must not start or end with whitespace.",
        "control_character": "Must not contain control characters.",
    }

    def __init__(self, **kwargs: Any) -> None:
        kwargs["trim_whitespace"] = False
        super().__init__(**kwargs)

    def to_internal_value(self, data: object) -> str:
        value = super().to_internal_value(data)
        if value != value.strip():
            self.fail("surrounding_space")
        if any(unicodedata.category(ch) == "Cc" for ch in value):
            self.fail("control_character")
        return value


class FiniteFloatField(serializers.FloatField):
    """A JSON number (not a string, not a boolean) that is finite and inside [min_value, max_value]."""

    default_error_messages = {"not_finite": "Must be a finite number (not NaN or infinity)."}

    def to_internal_value(self, data: object) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        value = super().to_internal_value(data)
        if not math.isfinite(value):
            self.fail("not_finite")
        return value


class StrictIntegerField(serializers.IntegerField):
    """An integer that refuses booleans, floats with a fraction and numeric strings."""

    def to_internal_value(self, data: object) -> int:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        if isinstance(data, float) and not data.is_integer():
            self.fail("invalid")
        return super().to_internal_value(data)


class CodeTextField(StrictCharField):
    """Code as an editor sends it: never trimmed, may be empty, NUL characters dropped, lone
    surrogates replaced.

    A NUL is legal in a source file, and the original server accepted it; PostgreSQL text
    cannot hold one. It is stripped (and counted in `arena_nul_stripped_total`) rather than
    refusing the request. A lone UTF-16 surrogate (JSON's `\\ud800` with no partner: an
    editor's buffer, or the extension cutting a surrogate pair in half when it trims the
    context) has no UTF-8 form either; it becomes U+FFFD (counted in
    `arena_surrogates_replaced_total`) so the vote is stored, never refused for it. Ids and
    other text fields still refuse one: there a replacement could make two ids one.
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_blank", True)
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data: object) -> str:
        if isinstance(data, str):
            if "\x00" in data:
                data = strip_nul(data)
            data = replace_surrogates(data)
        return super().to_internal_value(data)


def strip_nul(text: str) -> str:
    from .metrics import NUL_STRIPPED

    NUL_STRIPPED.inc()
    return text.replace("\x00", "")


_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_surrogates(text: str) -> str:
    """`text` with every lone surrogate as U+FFFD (json.loads already joined the pairs)."""
    replaced, count = _SURROGATE.subn("\ufffd", text)
    if count:
        from .metrics import SURROGATES_REPLACED

        SURROGATES_REPLACED.inc()
    return replaced


class PromptField(CodeTextField):
    """A prompt: text, or (the original server's chat format) a list of {role, content}."""

    default_error_messages = {
        "messages": "Must be text or a list of {{role, content}} messages with text content."
    }

    def to_internal_value(self, data: object) -> str:
        if isinstance(data, list):
            data = self.messages_text(data)
        return super().to_internal_value(data)

    def messages_text(self, messages: list[object]) -> str:
        parts = []
        for message in messages:
            if not isinstance(message, dict):
                self.fail("messages")
            role, content = message.get("role", ""), message.get("content", "")
            if not isinstance(role, str) or not isinstance(content, str):
                self.fail("messages")
            parts.append(f"{role}: {content}" if role else content)
        return "\n\n".join(parts)
