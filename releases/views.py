"""The public download page, /data/: the releases with their counts, sizes, checksums and
cards. The files themselves are served by the web server or the object store (file_url)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from leaderboard import selectors as lb_selectors

from . import selectors
from .card import CARD, MANIFEST, SUMS
from .writers import CSV, JSONL, PARQUET

FILES = (
    (PARQUET, "Parquet"),
    (JSONL, "JSONL"),
    (CSV, "Copilot Arena CSV"),
    (CARD, "Dataset card"),
    (MANIFEST, "Manifest"),
    (SUMS, "SHA256SUMS"),
)


def data_page(request: HttpRequest) -> HttpResponse:
    releases = [
        {
            "release": r,
            "files": [
                {
                    "label": label,
                    "url": selectors.file_url(release=r, name=name),
                    **(r.file(name) or {}),
                }
                for name, label in FILES
                if r.file(name)
            ],
            "board": r.board.get("models", []),
        }
        for r in selectors.public_releases()
    ]
    return render(
        request,
        "releases/data.html",
        {"releases": releases, "board": lb_selectors.board()},
    )
