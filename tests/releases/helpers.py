"""Shared steps of the release tests: votes posted through the API, releases, their files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow.parquet as pq

from releases.models import DatasetRelease
from releases.services import ReleaseOptions, build_release, start_release

URL = "/api/v1/battles"
CLIENT_NAME = "test client"  # the name tests/conftest.py gives the `keyed_api` key
ADDRESS = "203.0.113.77"
CLEAN_CODE = "def released_helper_7731(values):\n    return sorted(values)\n"


def post(api, n: int, *, user: str = "", privacy: str = "Research", **extra) -> None:
    body = {
        "pair_id": f"live-pair-{n}",
        "user_id": user,
        "model_a": "gpt-4o-2024-08-06" if n % 2 else "codestral-2405",
        "model_b": "deepseek-coder-fim" if n % 3 else "gemini-1.5-flash-002",
        "outcome": "model_a" if n % 4 else "model_b",
        "privacy": privacy,
        "file_type": "python",
        "latency_a_ms": 700.0,
        "latency_b_ms": 900.0,
        "client_version": "0.2.2",
        **extra,
    }
    r = api.post(URL, data=json.dumps(body), content_type="application/json", REMOTE_ADDR=ADDRESS)
    assert r.status_code == 201, r.content


def release(**options) -> DatasetRelease:
    opts = {"min_age_days": 0, "license": "cc-by-4.0", **options}
    return build_release(release_id=start_release(options=ReleaseOptions(**opts)).pk)


def release_text(root: Path, r: DatasetRelease) -> str:
    """Everything a release holds, readable: the text files as they are, Parquet decoded."""
    parts = []
    for f in r.files:
        path = root / r.version / f["name"]
        if f["name"].endswith(".parquet"):
            parts.append(json.dumps(pq.read_table(path).to_pylist(), default=str))
        elif f["name"].endswith(".gz"):
            parts.append(gzip.decompress(path.read_bytes()).decode("utf-8"))
        else:
            parts.append(path.read_text(encoding="utf-8"))
    return "\n".join(parts)


def rows(root: Path, r: DatasetRelease) -> list[dict]:
    return pq.read_table(root / r.version / "battles.parquet").to_pylist()
