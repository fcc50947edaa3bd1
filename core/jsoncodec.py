"""JSON for the values the site keeps in Redis: the cache's entries and the fan-out's slice fits.

Redis is shared by every process of the site, and whoever can write to it could otherwise
hand a pickle to a web process or a worker and have it run code there. Values therefore
travel as JSON, never pickle: `dumps` turns a value into UTF-8 JSON and `loads` back into an
equal value, so readers see the same types they wrote. What plain JSON cannot say is
written as a tagged object (`{"__t": tag, ...}`): tuples, bytes, sets, dates and times,
dicts whose keys are not all strings, numpy arrays and scalars (their raw bytes, exact), and
dataclasses -- only those defined in the site's own apps, in a module the reading process
has already imported, rebuilt through their own constructor. A tag naming anything else is
refused with `ValueError`, so data from Redis can at worst be wrong, never code. Floats keep NaN and the infinities.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import json
import sys
from typing import Any

import numpy as np

TAG = "__t"
# Packages whose dataclasses may be rebuilt from Redis: the site's own apps.
OWN_PACKAGES = frozenset(
    {
        "analysis",
        "arena_site",
        "catalogue",
        "contributors",
        "core",
        "evaluations",
        "external",
        "ingest",
        "leaderboard",
        "moderation",
        "serving",
    }
)


def dumps(value: Any) -> bytes:
    """`value` as UTF-8 JSON (TypeError for a type this module does not carry)."""
    return json.dumps(_encode(value), separators=(",", ":"), ensure_ascii=False).encode()


def loads(raw: bytes | str) -> Any:
    """The value `dumps` wrote (ValueError for malformed input or a foreign type)."""
    return json.loads(raw, object_hook=_decode)


def _encode(v: Any) -> Any:
    if isinstance(v, np.generic):  # before float: numpy's float64 is one
        return {TAG: "npscalar", "value": _encode(np.asarray(v))}
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, list):
        return [_encode(x) for x in v]
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v) and TAG not in v:
            return {k: _encode(x) for k, x in v.items()}
        return {TAG: "dict", "items": [[_encode(k), _encode(x)] for k, x in v.items()]}
    return _encode_tagged(v)


def _encode_tagged(v: Any) -> dict[str, Any]:
    """The types JSON has no form for, each under its tag."""
    if isinstance(v, tuple):
        return {TAG: "tuple", "items": [_encode(x) for x in v]}
    if isinstance(v, bytes | bytearray | memoryview):
        return {TAG: "bytes", "b64": base64.b64encode(bytes(v)).decode("ascii")}
    if isinstance(v, set | frozenset):
        return {TAG: type(v).__name__, "items": [_encode(x) for x in v]}
    if isinstance(v, dt.datetime | dt.date):
        return {TAG: "datetime" if isinstance(v, dt.datetime) else "date", "iso": v.isoformat()}
    if isinstance(v, np.ndarray):
        if v.dtype.hasobject:
            raise TypeError("numpy arrays of Python objects are not carried")
        return {
            TAG: "ndarray",
            "dtype": v.dtype.str,
            "shape": list(v.shape),
            "b64": base64.b64encode(np.ascontiguousarray(v).tobytes()).decode("ascii"),
        }
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        cls = type(v)
        _check_own(cls.__module__)
        fields = {f.name: _encode(getattr(v, f.name)) for f in dataclasses.fields(v) if f.init}
        return {TAG: "dataclass", "cls": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
    raise TypeError(f"{type(v).__module__}.{type(v).__qualname__} is not carried as JSON")


def _decode_ndarray(d: dict[str, Any]) -> np.ndarray:
    dtype = np.dtype(d["dtype"])
    if dtype.hasobject:
        raise ValueError("numpy arrays of Python objects are not carried")
    data = base64.b64decode(d["b64"])
    return np.frombuffer(data, dtype=dtype).reshape(d["shape"]).copy()


_DECODERS: dict[str, Any] = {
    "dict": lambda d: {_hashable(k): x for k, x in d["items"]},
    "tuple": lambda d: tuple(d["items"]),
    "bytes": lambda d: base64.b64decode(d["b64"]),
    "set": lambda d: {_hashable(x) for x in d["items"]},
    "frozenset": lambda d: frozenset(_hashable(x) for x in d["items"]),
    "datetime": lambda d: dt.datetime.fromisoformat(d["iso"]),
    "date": lambda d: dt.date.fromisoformat(d["iso"]),
    "ndarray": _decode_ndarray,
    "npscalar": lambda d: d["value"][()],
    "dataclass": lambda d: _dataclass(d["cls"], d["fields"]),
}


def _decode(d: dict[str, Any]) -> Any:
    tag = d.get(TAG)
    if tag is None:
        return d
    decoder = _DECODERS.get(tag) if isinstance(tag, str) else None
    if decoder is None:
        raise ValueError(f"unknown tag {tag!r}")
    return decoder(d)


def _hashable(k: Any) -> Any:
    # A list inside a key was a tuple (tuples are tagged, so only a malformed input gets here).
    if isinstance(k, list):
        raise ValueError("a list cannot be a key")
    return k


def _check_own(module: str) -> None:
    if module.partition(".")[0] not in OWN_PACKAGES:
        raise TypeError(f"dataclasses of {module} are not carried (only the site's own)")


def _dataclass(name: str, fields: dict[str, Any]) -> Any:
    module, _, qualname = name.partition(":")
    try:
        _check_own(module)
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    obj: Any = sys.modules.get(module)
    if obj is None:  # never imported on a reader's behalf: only what this process uses
        raise ValueError(f"{module} is not loaded here")
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
        raise ValueError(f"{name} is not a dataclass")
    known = {f.name for f in dataclasses.fields(obj) if f.init}
    if not set(fields) <= known:
        raise ValueError(f"{name} has no field(s) {sorted(set(fields) - known)}")
    return obj(**fields)
