"""Fast validation of vote and pair-request bodies, with the serializers' own errors when anything is off.

A DRF serializer costs 0.4-0.7 ms per vote before it looks at the data: instantiating it
deep-copies every declared field, and each field then runs its validator objects (the
surrogate check calls `ord()` on every character of every code field). `FastValidator`
compiles a serializer class's declared fields once into plain checks and runs those on a
body instead, in a few microseconds.

It only ever *accepts*: for a body it can vouch for it returns exactly what the
serializer's `run_validation` would return (same keys, defaults and values); for anything
else (a missing required field, a wrong type, a value out of bounds, an unknown model, a
failing `validate`) it gives up and `validate()` runs the serializer itself, so every
error message and field path is the serializer's own. Field types it does not know make
the whole serializer fall back to DRF, so a new field cannot be skipped silently.
tests/ingest/test_validation.py checks the two agree on many valid and invalid bodies.
One compiler with a check per field kind, kept together (longer than most modules).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, NoReturn

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import (
    MaxLengthValidator,
    MaxValueValidator,
    MinLengthValidator,
    MinValueValidator,
    ProhibitNullCharactersValidator,
)
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from catalogue.fields import ModelKeyField
from catalogue.selectors import resolve_model_key
from core.fields import (
    CodeTextField,
    FiniteFloatField,
    IdentifierField,
    PromptField,
    StrictCharField,
    StrictIntegerField,
)
from core.fields import strip_nul as strip_nul_chars

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # Unicode category Cc
_MISSING = object()
_SKIP = object()
_NEW_LIST = object()
# Integers beyond this go to DRF, whose str() round trip has its own limits.
_INT_BOUND = 10**18


class _Slow(Exception):
    """The fast path cannot vouch for this value: let the serializer decide."""


Check = Callable[[Any], Any]


def _unsupported(field: Any) -> NoReturn:
    raise TypeError(f"no fast check for {type(field).__name__} {field.field_name!r}")


def _limits(field: serializers.Field[Any, Any, Any, Any], allowed: tuple[type, ...]) -> None:
    """The field's validators must be exactly the ones its attributes describe."""
    expected = {
        MaxLengthValidator: getattr(field, "max_length", None),
        MinLengthValidator: getattr(field, "min_length", None),
        MaxValueValidator: getattr(field, "max_value", None),
        MinValueValidator: getattr(field, "min_value", None),
    }
    validators: list[Any] = list(field.validators)
    for v in validators:
        if type(v) not in allowed:
            _unsupported(field)
        if type(v) in expected and v.limit_value != expected[type(v)]:
            _unsupported(field)


def _text(field: serializers.CharField, *, strip_nul: bool = False) -> Check:
    _limits(
        field,
        (
            MaxLengthValidator,
            MinLengthValidator,
            ProhibitNullCharactersValidator,
            ProhibitSurrogateCharactersValidator,
        ),
    )
    trim, allow_blank = field.trim_whitespace, field.allow_blank
    max_length, min_length = field.max_length, field.min_length

    def check(v: Any) -> Any:
        if type(v) is not str:  # DRF also takes numbers and turns them into text
            raise _Slow
        if strip_nul and "\x00" in v:
            v = strip_nul_chars(v)
        s = v.strip() if trim else v
        if not s and (trim or not v):
            if allow_blank:
                return ""
            raise _Slow
        if max_length is not None and len(s) > max_length:
            raise _Slow
        if min_length is not None and len(s) < min_length:
            raise _Slow
        if "\x00" in s or (not s.isascii() and _SURROGATE.search(s)):
            raise _Slow
        return s

    return check


def _identifier(field: IdentifierField) -> Check:
    text = _text(field)

    def check(v: Any) -> Any:
        s = text(v)
        if s != s.strip():
            raise _Slow
        if not (s.isascii() and s.isprintable()) and _CONTROL.search(s):
            raise _Slow
        return s

    return check


def _model_key(field: ModelKeyField) -> Check:
    text = _text(field)

    def check(v: Any) -> Any:
        entry = resolve_model_key(text(v))
        if entry is None:
            raise _Slow
        return entry

    return check


def _choice(field: serializers.ChoiceField) -> Check:
    if field.validators:
        _unsupported(field)
    choices = dict(field.choice_strings_to_values)
    allow_blank = field.allow_blank

    def check(v: Any) -> Any:
        if type(v) is str:
            if v in choices:
                return choices[v]
            if v == "" and allow_blank:
                return ""
        raise _Slow

    return check


def _float(field: FiniteFloatField) -> Check:
    _limits(field, (MaxValueValidator, MinValueValidator))
    lo, hi = field.min_value, field.max_value

    def check(v: Any) -> Any:
        if type(v) is not float and type(v) is not int:  # not bool, not numeric strings
            raise _Slow
        try:
            f = float(v)
        except OverflowError:
            raise _Slow from None
        if not math.isfinite(f) or (lo is not None and f < lo) or (hi is not None and f > hi):
            raise _Slow
        return f

    return check


def _integer(field: StrictIntegerField) -> Check:
    _limits(field, (MaxValueValidator, MinValueValidator))
    lo, hi = field.min_value, field.max_value

    def check(v: Any) -> Any:
        if type(v) is not int or not -_INT_BOUND < v < _INT_BOUND:
            raise _Slow
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise _Slow
        return v

    return check


def _items(
    child: Check, *, allow_empty: bool, max_length: int | None, min_length: int | None
) -> Check:
    """A JSON list within the length limits, each item through `child`."""

    def check(v: Any) -> Any:
        if type(v) is not list:
            raise _Slow
        n = len(v)
        if (
            (not allow_empty and n == 0)
            or (max_length is not None and n > max_length)
            or (min_length is not None and n < min_length)
        ):
            raise _Slow
        return [child(item) for item in v]

    return check


def _always_slow(_v: Any) -> Any:
    raise _Slow


def _many(field: serializers.ListSerializer[Any]) -> Check:
    if field.validators or not isinstance(field.child, serializers.Serializer):
        _unsupported(field)
    if type(field).validate is not serializers.ListSerializer.validate:
        return _always_slow  # its own validate: DRF runs it
    return _items(
        _compile(field.child),
        allow_empty=bool(field.allow_empty),
        max_length=getattr(field, "max_length", None),
        min_length=getattr(field, "min_length", None),
    )


def _boolean(field: serializers.BooleanField) -> Check:
    if field.validators:
        _unsupported(field)

    def check(v: Any) -> Any:
        if v is True or v is False:  # DRF also takes "true", 1, "off", ...: it decides those
            return v
        raise _Slow

    return check


def _list(field: serializers.ListField) -> Check:
    _limits(field, (MaxLengthValidator, MinLengthValidator))
    return _items(
        _field_check(field.child),
        allow_empty=field.allow_empty,
        max_length=field.max_length,
        min_length=field.min_length,
    )


def _code(field: CodeTextField) -> Check:
    return _text(field, strip_nul=True)  # a prompt as a message list goes slow


# Exact classes: a subclass may validate differently, so it is not assumed to be alike.
_BUILDERS: dict[type, Callable[[Any], Check]] = {
    ModelKeyField: _model_key,
    serializers.CharField: _text,
    StrictCharField: _text,
    IdentifierField: _identifier,
    CodeTextField: _code,
    PromptField: _code,
    serializers.ChoiceField: _choice,
    FiniteFloatField: _float,
    StrictIntegerField: _integer,
    serializers.ListSerializer: _many,
    serializers.BooleanField: _boolean,
    serializers.ListField: _list,
}


def _field_check(field: Any) -> Check:
    build = _BUILDERS.get(type(field))
    if build is None:
        _unsupported(field)
    return build(field)


def _default_of(field: serializers.Field[Any, Any, Any, Any]) -> Any:
    if field.default is empty:
        return _SKIP  # optional without default: left out of the validated data
    if field.default is list:
        return _NEW_LIST  # `default=list`: a fresh empty list each time, as DRF calls it
    if not isinstance(field.default, str | int | float | bool | None):
        _unsupported(field)  # callable (may need context) or mutable: let DRF handle it
    return field.default


# One field of a compiled serializer: its name, its check, the value when it is absent
# (_Slow: it is required; _SKIP: left out), whether null is allowed, its validate_<name>.
_Step = tuple[str, Check, Any, bool, Callable[[Any], Any] | None]


def _steps(serializer: serializers.Serializer[Any]) -> list[_Step]:
    steps: list[_Step] = []
    for name, field in serializer.fields.items():
        if field.read_only:
            continue
        if field.source != name:
            _unsupported(field)
        absent = _Slow if field.required else _default_of(field)
        steps.append(
            (
                name,
                _field_check(field),
                absent,
                field.allow_null,
                getattr(serializer, "validate_" + name, None),
            )
        )
    return steps


def _when_absent(absent: Any) -> Any:
    """The value of a field the body leaves out (_SKIP: left out of the data too)."""
    if absent is _Slow:
        raise _Slow  # required
    return [] if absent is _NEW_LIST else absent


def _compile(serializer: serializers.Serializer[Any]) -> Check:
    """One check for a whole (bound) serializer: its fields, validate_<field>, validate."""
    if serializer.validators:
        _unsupported(serializer)
    steps = _steps(serializer)
    validate = serializer.validate

    def check(data: Any) -> Any:
        if type(data) is not dict:
            raise _Slow
        out = {}
        for name, field_check, absent, allow_null, validate_method in steps:
            v = data.get(name, _MISSING)
            if v is _MISSING:
                value = _when_absent(absent)
                if value is _SKIP:
                    continue
            elif v is None:
                if not allow_null:
                    raise _Slow
                value = None
            else:
                value = field_check(v)
            if validate_method is not None:
                value = validate_method(value)
            out[name] = value
        return validate(out)

    return check


class FastValidator:
    """Validates bodies for one serializer class; see the module docstring."""

    def __init__(self, serializer_class: type[serializers.Serializer[Any]]) -> None:
        self.serializer_class = serializer_class
        # A bound instance, kept for its validate methods (ours keep no state on `self`).
        try:
            self._check: Check | None = _compile(serializer_class())
        except TypeError:
            self._check = None  # a field without a fast check: always the serializer

    def fast(self, data: Any) -> dict[str, Any] | None:
        """The validated data if the fast path vouches for `data`, else None."""
        if self._check is None:
            return None
        try:
            valid: dict[str, Any] = self._check(data)
            return valid
        except (_Slow, serializers.ValidationError, DjangoValidationError):
            return None

    def errors_or_data(self, data: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """(validated data, None) or (None, the serializer's errors)."""
        out = self.fast(data)
        if out is not None:
            return out, None
        s = self.serializer_class(data=data)
        if s.is_valid():
            return s.validated_data, None
        return None, s.errors

    def validate(self, data: Any) -> dict[str, Any]:
        """The validated data; raises the serializer's ValidationError when `data` is bad."""
        out = self.fast(data)
        if out is not None:
            return out
        s = self.serializer_class(data=data)
        s.is_valid(raise_exception=True)
        valid: dict[str, Any] = s.validated_data
        return valid


_validators: dict[type[serializers.Serializer[Any]], FastValidator] = {}


def validator_for(serializer_class: type[serializers.Serializer[Any]]) -> FastValidator:
    """The process's FastValidator of a serializer class (compiled on first use)."""
    v = _validators.get(serializer_class)
    if v is None:
        v = _validators[serializer_class] = FastValidator(serializer_class)
    return v
