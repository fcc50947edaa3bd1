"""The layer contract of pyproject.toml: kept by the code, and broken by an upward import.

`make lint` runs import-linter on the real tree; this test shows on a copy that the contract
would catch a violation (a lower app importing a higher one, or Django inside analysis/).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
    "root_packages"
]
LINT = Path(sys.executable).with_name("lint-imports")


def lint(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT), "--no-cache"], cwd=tree, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("layers")
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    return dest


def _with_line(tree: Path, module: str, line: str) -> Path:
    copy = tree.parent / f"{tree.name}-{module.replace('/', '-')}"
    shutil.copytree(tree, copy)
    target = copy / module
    target.write_text(target.read_text() + f"\n{line}\n")
    return copy


def test_the_tree_keeps_both_contracts(tree):
    result = lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def test_an_upward_import_breaks_the_layers(tree):
    broken = _with_line(tree, "core/locks.py", "from leaderboard import models as _upward")
    result = lint(broken)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout
    assert "core.locks -> leaderboard.models" in result.stdout


def test_django_inside_analysis_breaks_purity(tree):
    broken = _with_line(tree, "analysis/ranks.py", "import django as _django")
    result = lint(broken)
    assert result.returncode != 0
    assert "analysis is pure" in result.stdout and "analysis.ranks -> django" in result.stdout
