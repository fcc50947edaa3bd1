"""deploy/check_wheel.py on wheels assembled from this checkout: it must name what is missing."""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("check_wheel", ROOT / "deploy" / "check_wheel.py")
assert _spec is not None and _spec.loader is not None
check_wheel = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_wheel)


def _wheel(tmp_path: Path, keep) -> Path:
    """A wheel-shaped zip holding the checkout's files for which keep(path) is true."""
    path = tmp_path / "code_arena-0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for f in check_wheel.checkout_files(ROOT):
            if keep(f):
                zf.writestr(str(f), "")
        zf.writestr("code_arena-0.dist-info/METADATA", "")
    return path


def _shipped(f) -> bool:
    return (ROOT / f.parts[0] / "__init__.py").is_file() and f.parts[0] not in (
        "tests",
        "benchmarks",
    )


def test_a_wheel_with_every_package_file_passes(tmp_path):
    assert check_wheel.problems(_wheel(tmp_path, _shipped), ROOT) == []


def test_a_missing_app_is_named(tmp_path):
    found = check_wheel.problems(
        _wheel(tmp_path, lambda f: _shipped(f) and f.parts[0] != "external"), ROOT
    )
    assert len(found) == 1 and found[0].startswith("app external: not in the wheel at all")


def test_a_missing_template_or_static_file_is_named(tmp_path):
    dropped = {"templates", "static"}
    found = check_wheel.problems(
        _wheel(tmp_path, lambda f: _shipped(f) and not dropped & set(f.parts)), ROOT
    )
    assert any(line.endswith("base.html is missing") for line in found)
    assert any(line.endswith("arena.css is missing") for line in found)


def test_tests_leaking_into_the_wheel_are_named(tmp_path):
    found = check_wheel.problems(
        _wheel(tmp_path, lambda f: _shipped(f) or f.parts[0] == "tests"), ROOT
    )
    assert found == ["top-level package 'tests' in the wheel is not part of the site"]
