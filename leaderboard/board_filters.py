"""The board's search, filters and sort from the query string, so they work without JavaScript.

`?q=` (name contains), `?org=` (organisation), `?open=1|0` (open weights or proprietary),
`?sort=<column>&dir=asc|desc`: the same parameters the page's script reads and writes
(arena_site/static/arena.js), applied on the server to the rows the table renders.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar, cast
from urllib.parse import urlencode

MAX_QUERY = 100
Row = TypeVar("Row", bound=Mapping[str, object])
SortKey = str | float  # a column's value, None where unknown


def openness(row: Mapping[str, object]) -> str:
    """ "1" open weights, "0" proprietary, "" unknown (as the rows' data-open attribute)."""
    if row.get("open_weights") is not None:
        return "1" if row["open_weights"] else "0"
    licence = str(row.get("license") or "").lower()
    if licence == "proprietary":
        return "0"
    return "1" if licence else ""


def _number(row: Mapping[str, object], key: str) -> float | None:
    value = row.get(key)
    return value if isinstance(value, int | float) else None


def _width(row: Mapping[str, object]) -> float | None:
    lo, hi = _number(row, "ci_lower"), _number(row, "ci_upper")
    return None if lo is None or hi is None else hi - lo


_KEYS: dict[str, Callable[[Mapping[str, object]], SortKey | None]] = {
    "rank": lambda r: _number(r, "rank"),
    "model": lambda r: str(r.get("display_name") or r.get("model") or "").lower(),
    "change": lambda r: _number(r, "rank_change"),
    "rating": lambda r: _number(r, "rating"),
    "interval": _width,
    "votes": lambda r: _number(r, "votes"),
    "latency": lambda r: _number(r, "latency_p50_ms"),
    "org": lambda r: str(r.get("organization") or "").lower() or None,
    "license": lambda r: str(r.get("license") or "").lower() or None,
}
# The direction a column sorts in when the link does not say (as the page's headers).
_NATURAL_DIR = {"rank": "asc", "model": "asc", "latency": "asc", "org": "asc", "license": "asc"}


def sort_links(*, params: Mapping[str, str], sort: str, direction: str) -> dict[str, str]:
    """`?…&sort=<column>&dir=…` per column, keeping the other parameters: the header links
    that sort without JavaScript (the sorted column's link reverses it)."""
    keep = {k: str(params[k]) for k in ("category", "view", "q", "org", "open") if params.get(k)}
    links = {}
    for key in _KEYS:
        natural = _NATURAL_DIR.get(key, "desc")
        flipped = "desc" if direction == "asc" else "asc"
        links[key] = "?" + urlencode(
            {**keep, "sort": key, "dir": flipped if key == sort else natural}
        )
    return links


def apply_filters(
    *, rows: Sequence[Row], params: Mapping[str, str]
) -> tuple[list[Row], dict[str, object]]:
    """The rows to render and what the form shows (values chosen, organisations, counts)."""
    q = str(params.get("q") or "").strip()[:MAX_QUERY]
    org = str(params.get("org") or "")
    open_ = str(params.get("open") or "")
    if open_ not in ("", "0", "1"):
        open_ = ""
    needle = q.lower()
    shown = [
        r
        for r in rows
        if (
            not needle
            or needle in str(r.get("display_name") or "").lower()
            or needle in str(r.get("model") or "").lower()
        )
        and (not org or r.get("organization") == org)
        and (not open_ or openness(r) == open_)
    ]
    sort = str(params.get("sort") or "")
    direction = ""
    if sort in _KEYS:
        direction = str(params.get("dir") or _NATURAL_DIR.get(sort, "desc"))
        direction = direction if direction in ("asc", "desc") else "desc"
        key = _KEYS[sort]
        present = [r for r in shown if key(r) is not None]
        missing = [r for r in shown if key(r) is None]  # unknown values last either way
        shown = (
            sorted(present, key=lambda r: cast(SortKey, key(r)), reverse=direction == "desc")
            + missing
        )
    else:
        sort = ""
    return shown, {
        "q": q,
        "org": org,
        "open": open_,
        "sort": sort,
        "dir": direction,
        "organizations": sorted({str(r["organization"]) for r in rows if r.get("organization")}),
        "shown": len(shown),
        "total": len(rows),
        "links": sort_links(params=params, sort=sort, direction=direction),
    }
