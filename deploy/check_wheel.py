"""Fail when a built wheel misses an app, template, static or data file the site needs.

    .venv/bin/python deploy/check_wheel.py path/to/code_arena-*.whl

Run from (or with ``--root``) the checkout the wheel was built from; the deployment smoke
test (``deploy/smoke_test.py``) runs it on every build. The rules:

1. every first-party app in ``INSTALLED_APPS`` (a package whose directory is in the checkout)
   and every other top-level package of the checkout but ``tests`` and ``benchmarks`` (such
   as ``analysis``) is in the wheel, with every file of the checkout under its directory --
   code, migrations, management commands, templates, static and data files alike;
2. every file under a ``TEMPLATES`` ``DIRS`` or ``STATICFILES_DIRS`` directory of the checkout
   is in the wheel at the same path (a directory outside every package cannot be, so keeping
   templates or static files there fails here instead of in production);
3. the wheel holds no other top-level package (``tests`` or ``benchmarks`` leaking into
   site-packages, where their generic names would collide with other projects').

"Files of the checkout" are the ones git tracks plus new ones it does not ignore: exactly
what the smoke test copies to build from. Third-party apps are not checked here: the smoke
test's ``manage.py check`` in a fresh virtualenv fails if one of them is not installed.
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
# Packages of the checkout that are not part of the site.
NOT_SHIPPED = frozenset({"tests", "benchmarks"})


def checkout_files(root: Path) -> list[PurePosixPath]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        check=True,
        capture_output=True,
    ).stdout
    return [
        PurePosixPath(p)
        for p in out.decode().split("\0")
        if p and (root / p).is_file() and "__pycache__" not in p
    ]


def site_settings(root: Path):
    """The checkout's settings module (imported as the embedded default unless it already is)."""
    if "arena_site.settings" in sys.modules:
        return sys.modules["arena_site.settings"]
    for name in ("DATABASE_URL", "REDIS_URL", "DEBUG"):
        os.environ.pop(name, None)
    sys.path.insert(0, str(root))
    return importlib.import_module("arena_site.settings")


def _under(path: PurePosixPath, folder: PurePosixPath) -> bool:
    return folder == PurePosixPath(".") or folder in path.parents


def problems(wheel: Path, root: Path) -> list[str]:
    settings = site_settings(root)
    files = checkout_files(root)
    with zipfile.ZipFile(wheel) as zf:
        names = {PurePosixPath(n) for n in zf.namelist()}
    found: list[str] = []

    apps = [PurePosixPath(e.split(".")[0]) for e in settings.INSTALLED_APPS]
    apps = [a for a in apps if (root / a / "__init__.py").is_file()]
    others = sorted(
        PurePosixPath(d.name)
        for d in root.iterdir()
        if (d / "__init__.py").is_file() and d.name not in NOT_SHIPPED
    )
    shipped = apps + [p for p in others if p not in apps]
    for package in shipped:
        kind = "app" if package in apps else "package"
        missing = [f for f in files if _under(f, package) and f not in names]
        if PurePosixPath(package, "__init__.py") not in names:
            found.append(f"{kind} {package}: not in the wheel at all ({len(missing)} file(s))")
        else:
            found.extend(f"{kind} {package}: {f} is missing" for f in missing)

    dirs: list[tuple[str, Path]] = [
        ("TEMPLATES DIRS", Path(d)) for t in settings.TEMPLATES for d in t.get("DIRS", [])
    ]
    for entry in settings.STATICFILES_DIRS:
        dirs.append(("STATICFILES_DIRS", Path(entry[1] if isinstance(entry, tuple) else entry)))
    for what, directory in dirs:
        try:
            rel = PurePosixPath(directory.resolve().relative_to(root.resolve()).as_posix())
        except ValueError:
            continue  # outside the checkout: a dependency's files (installed with it)
        found.extend(
            f"{what} {rel}: {f} is missing"
            for f in files
            if _under(f, rel) and f not in names and not any(_under(f, a) for a in shipped)
        )

    tops = {n.parts[0] for n in names if len(n.parts) > 1 and not n.parts[0].endswith(".dist-info")}
    found.extend(
        f"top-level package {top!r} in the wheel is not part of the site"
        for top in sorted(tops - {str(p) for p in shipped})
    )
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--root", type=Path, default=HERE.parent, help="the checkout")
    args = parser.parse_args()
    found = problems(args.wheel, args.root)
    for line in found:
        print(f"check_wheel: {line}", file=sys.stderr)
    if found:
        print(f"check_wheel: {args.wheel.name}: {len(found)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_wheel: {args.wheel.name} holds every app, template, static and data file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
