"""The dataset card (README.md with the Hugging Face card's YAML header), the manifest and
SHA256SUMS of a release."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml
from django.template.loader import render_to_string

from .columns import COLUMNS, hf_dtype
from .models import DatasetRelease
from .writers import DATA_FILES, PARQUET

CARD, MANIFEST, SUMS = "README.md", "manifest.json", "SHA256SUMS"
SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def size_category(n: int) -> str:
    return next((label for limit, label in SIZE_CATEGORIES if n < limit), "n>100M")


def _feature(name: str, t: pa.DataType) -> dict[str, Any]:
    if pa.types.is_struct(t):
        return {"name": name, "struct": [_feature(f.name, f.type) for f in t]}
    return {"name": name, "dtype": hf_dtype(t)}


def header(release: DatasetRelease, *, battles: int, parquet_bytes: int) -> str:
    """The card's YAML front matter, in the keys Hugging Face reads."""
    meta = {
        "license": release.license,
        "pretty_name": f"Code completion arena battles ({release.version})",
        "language": ["code"],
        "task_categories": ["text-generation"],
        "tags": ["code", "code-completion", "human-preference", "arena", "pairwise-comparison"],
        "size_categories": [size_category(battles)],
        "configs": [
            {"config_name": "default", "data_files": [{"split": "train", "path": PARQUET}]}
        ],
        "dataset_info": {
            "features": [_feature(c.name, c.type) for c in COLUMNS],
            "splits": [{"name": "train", "num_bytes": parquet_bytes, "num_examples": battles}],
        },
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n"


def write_card(release: DatasetRelease, directory: Path, files: list[dict[str, Any]]) -> None:
    battles = release.counts["battles"]
    parquet = next(f for f in files if f["name"] == PARQUET)
    body = render_to_string(
        "releases/card.md",
        {
            "release": release,
            "counts": release.counts,
            "files": files,
            "columns": [(c.name, hf_dtype(c.type), c.meaning) for c in COLUMNS],
            "board": release.board,
            "left_out": sorted(release.counts.get("left_out", {}).items()),
            "kinds": sorted(release.counts.get("secret_kinds", {}).items()),
        },
    )
    text = header(release, battles=battles, parquet_bytes=parquet["bytes"]) + body
    (directory / CARD).write_text(text, encoding="utf-8")


def file_entry(directory: Path, name: str, rows: int | None = None) -> dict[str, Any]:
    path = directory / name
    entry: dict[str, Any] = {"name": name, "bytes": path.stat().st_size, "sha256": sha256(path)}
    if rows is not None:
        entry["rows"] = rows
    return entry


def finish(release: DatasetRelease, directory: Path, rows: dict[str, int]) -> list[dict[str, Any]]:
    """Card, manifest and SHA256SUMS next to the data files; every file's entry."""
    files = [file_entry(directory, name, rows[name]) for name in DATA_FILES]
    write_card(release, directory, files)
    files.append(file_entry(directory, CARD))
    manifest = {
        "version": release.version,
        "created_at": release.created_at.isoformat(),
        "cutoff": release.cutoff.isoformat(),
        "license": release.license,
        "options": {
            "min_age_days": release.min_age_days,
            "stable_ids": release.stable_ids,
            "include_simulated": release.include_simulated,
            "include_excluded": release.include_excluded,
            "on_secret": release.on_secret,
        },
        "counts": release.counts,
        "columns": [{"name": c.name, "type": str(c.type), "meaning": c.meaning} for c in COLUMNS],
        "files": files,
        "board": release.board,
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    files.append(file_entry(directory, MANIFEST))
    (directory / SUMS).write_text(
        "".join(f"{f['sha256']}  {f['name']}\n" for f in files), encoding="utf-8"
    )
    files.append(file_entry(directory, SUMS))
    return files
