"""docs/scaling.md shows the several-machines drill's own files, as they are in deploy/cluster/."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["nginx.conf", "machine.env", "procfile"])
def test_scaling_doc_shows_the_drills_file_verbatim(name):
    shown = (ROOT / "docs" / "scaling.md").read_text()
    assert (ROOT / "deploy" / "cluster" / name).read_text().strip() in shown
