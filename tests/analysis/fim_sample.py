"""The Copilot Arena sample's battles as the FiM tests read them (test_fim, test_fim_cleanup)."""

from __future__ import annotations

import csv
import sys

from tests.analysis.data.sample_battles import COLUMNS, SAMPLE_CSV


def load_fim_sample() -> tuple[list[dict[str, str]], int]:
    csv.field_size_limit(sys.maxsize)
    valid, malformed = [], 0
    with SAMPLE_CSV.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if any(row.get(c) is None for c in COLUMNS):
                malformed += 1
                continue
            valid.append(row)
    return valid, malformed
