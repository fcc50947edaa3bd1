"""The columns of a release: names, Arrow types and meanings, in file order.

One list serves the Parquet schema, the JSONL keys, the dataset card's field table and its
Hugging Face `dataset_info` header; it is read from `columns.csv` (name, type, meaning). The first columns follow LMArena's preference datasets
(`model_a`, `model_b`, `winner`, `tstamp`, `language`, `category_tag`, `is_code`), so their
loaders read a release; the rest are this arena's own. The Copilot Arena CSV view has its
own short list (`CSV_COLUMNS`).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ingest.models import SIZE_FIELDS

_TABLE = Path(__file__).with_name("columns.csv")

# Numbers stored on a battle that a release row carries as they are.
MEASURES = (
    *SIZE_FIELDS,
    "completion_a_lines",
    "completion_b_lines",
    "pair_probability",
)


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    meaning: str


CATEGORY_TAG = pa.struct(
    [
        ("task_type", pa.string()),
        ("programming_language", pa.string()),
        ("context_bucket", pa.string()),
    ]
)

# The Arrow type of each type name in the table.
_TYPES = {
    "string": pa.string(),
    "float64": pa.float64(),
    "int64": pa.int64(),
    "bool": pa.bool_(),
    "category_tag": CATEGORY_TAG,
}


def _load() -> tuple[Column, ...]:
    with _TABLE.open(newline="", encoding="utf-8") as handle:
        return tuple(
            Column(r["name"], _TYPES[r["type"]], r["meaning"]) for r in csv.DictReader(handle)
        )


COLUMNS = _load()
SCHEMA = pa.schema([(c.name, c.type) for c in COLUMNS])

# Copilot Arena's released sample (`copilot_arena_examples_v1.csv`): completion battles with
# code and a winner; acceptedIndex 0 = the top completion (model_a) was accepted.
CSV_COLUMNS = (
    "prefix",
    "suffix",
    "model_a",
    "model_b",
    "acceptedIndex",
    "completion_a",
    "completion_b",
)


def hf_dtype(t: pa.DataType) -> str:
    """The Hugging Face `datasets` dtype name of an Arrow type (the card's header)."""
    if pa.types.is_string(t):
        return "string"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_float64(t):
        return "float64"
    return str(t)
