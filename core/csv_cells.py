"""CSV cells a spreadsheet will not run: OWASP's rule against formula injection.

Every CSV the site writes (the board's `?format=csv`, the admin's audit-log export) passes
its rows through `safe_row`. A text cell starting with `=`, `+`, `-`, `@`, a tab or a
carriage return would be read by a spreadsheet as a formula (`=HYPERLINK(...)` in an
organisation name or a moderation reason an admin typed); such a cell gets a leading `'`,
which spreadsheets show as text. Numbers are written as they are: `-3` is a number, not a
formula, and only text can carry one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_row(row: Iterable[Any]) -> list[Any]:
    return [safe_cell(v) for v in row]


def safe_dict(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: safe_cell(v) for k, v in row.items()}
