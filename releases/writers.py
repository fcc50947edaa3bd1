"""The data files of a release, written side by side from one pass over its rows: Parquet
(pyarrow, zstd), gzipped JSONL (one battle per line; plain JSON text of a large release is an
order of magnitude larger than the Parquet file) and the Copilot Arena CSV view.

The CSV view holds what Copilot Arena's own sample holds: completion battles with code and a
winner (acceptedIndex 0 = the top completion, model_a). Code is written verbatim, so a cell
may begin with `=`; the card says to load the file with a CSV reader, not a spreadsheet.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path
from types import TracebackType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .columns import CSV_COLUMNS, SCHEMA

PARQUET, JSONL, CSV = "battles.parquet", "battles.jsonl.gz", "copilot_arena.csv"
DATA_FILES = (PARQUET, JSONL, CSV)
BATCH = 20_000
ACCEPTED = {"model_a": 0, "model_b": 1}


class ReleaseWriter:
    """Context manager: `add(row)` for each release row, in order; files close on exit."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.rows = {name: 0 for name in DATA_FILES}
        self._batch: list[dict[str, Any]] = []

    def __enter__(self) -> ReleaseWriter:
        d = self.directory
        self._parquet = pq.ParquetWriter(d / PARQUET, SCHEMA, compression="zstd")
        # mtime 0: the same rows give the same bytes (and checksum) whenever written.
        self._gzip = gzip.GzipFile(d / JSONL, "wb", compresslevel=6, mtime=0)
        self._jsonl = io.TextIOWrapper(self._gzip, encoding="utf-8")
        self._csv_file = open(d / CSV, "w", encoding="utf-8", newline="")
        self._csv = csv.writer(self._csv_file)
        self._csv.writerow(CSV_COLUMNS)
        return self

    def add(self, row: dict[str, Any]) -> None:
        self._batch.append(row)
        self._jsonl.write(json.dumps(row, ensure_ascii=False) + "\n")
        self.rows[JSONL] += 1
        if row["kind"] == "completion" and row["prefix"] is not None and row["winner"] in ACCEPTED:
            self._csv.writerow(
                [
                    row["prefix"],
                    row["suffix"],
                    row["model_a"],
                    row["model_b"],
                    ACCEPTED[row["winner"]],
                    row["completion_a"],
                    row["completion_b"],
                ]
            )
            self.rows[CSV] += 1
        if len(self._batch) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._batch:
            self._parquet.write_table(pa.Table.from_pylist(self._batch, schema=SCHEMA))
            self.rows[PARQUET] += len(self._batch)
            self._batch = []

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if kind is None:
                self._flush()
        finally:
            self._parquet.close()
            self._jsonl.close()
            self._gzip.close()
            self._csv_file.close()
