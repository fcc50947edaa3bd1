"""The JSON parser of every API route: DRF's, with a nesting limit and a 400 for any malformed body.

A body nested thousands of levels deep makes `json.loads` raise RecursionError (not the
ValueError DRF turns into a 400), and a merely deep one makes every later walk over it
slow. Votes are at most four levels deep (`completionItems.0.…`), so anything deeper than
`ARENA_MAX_JSON_DEPTH` is refused with a 400 naming `body`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def depth_exceeds(value: object, limit: int) -> bool:
    """Whether `value` has containers nested more than `limit` deep (iterative: no recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children: Iterable[object]
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


class SafeJSONParser(JSONParser):
    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        limit = settings.ARENA_MAX_JSON_DEPTH
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"body: JSON nested more than {limit} levels deep.") from None
        if isinstance(data, dict | list) and depth_exceeds(data, limit):
            raise ParseError(f"body: JSON nested more than {limit} levels deep.")
        return data
