"""Load the 113-battle Copilot Arena sample (Apache-2.0) shipped in arena_site/data/copilot-arena-sample/.

The CSV has very large quoted fields and one malformed row (a single field); this
loader raises the csv field limit and skips rows that do not have all seven columns.
Row indices are 0-based positions among the data rows (header excluded), so the
malformed row keeps its index (23) and the well-formed rows keep theirs.
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path

SAMPLE_CSV = (
    Path(__file__).parents[3]
    / "arena_site"
    / "data"
    / "copilot-arena-sample"
    / "copilot_arena_examples_v1.csv"
)
COLUMNS = (
    "prefix",
    "suffix",
    "model_a",
    "model_b",
    "acceptedIndex",
    "completion_a",
    "completion_b",
)


@dataclass(frozen=True)
class SampleBattle:
    index: int
    prefix: str
    suffix: str
    model_a: str
    model_b: str


def load_sample_battles() -> list[SampleBattle]:
    csv.field_size_limit(sys.maxsize)
    with SAMPLE_CSV.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        assert tuple(header) == COLUMNS, header
        battles = []
        for index, row in enumerate(reader):
            if len(row) != len(COLUMNS):
                continue
            battles.append(
                SampleBattle(
                    index=index, prefix=row[0], suffix=row[1], model_a=row[2], model_b=row[3]
                )
            )
    return battles
