"""What every management command shares: one-line errors for bad paths, progress on a terminal.

`readable_file` turns a missing, directory or unreadable path into a `CommandError` (one
line on stderr, exit status 1) before anything opens it. `progress` wraps an iterable in a
tqdm bar on stderr only when stderr is a terminal, so logs and pipes get no bar.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from django.core.management.base import CommandError
from tqdm import tqdm

T = TypeVar("T")


def readable_file(path: Path) -> Path:
    if not path.exists():
        raise CommandError(f"{path}: no such file")
    if path.is_dir():
        raise CommandError(f"{path}: is a directory, not a file")
    if not os.access(path, os.R_OK):
        raise CommandError(f"{path}: not readable (permission denied)")
    return path


def on_terminal() -> bool:
    return sys.stderr.isatty()


def progress(
    items: Iterable[T], *, total: int | None = None, desc: str, unit: str = " rows"
) -> Iterator[T]:
    if not on_terminal():
        yield from items
        return
    # The terminal's size, 80x24 when it reports none (tqdm draws nothing on a 0x0 one).
    size = shutil.get_terminal_size((80, 24))
    yield from tqdm(
        items,
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        ncols=size.columns,
        nrows=size.lines,
    )
