"""A benchmarked tree: `git archive` of one commit in a temporary directory.

Benchmarks measure a commit, not the working tree, so half-finished edits cannot change a run.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def snapshot_tree(ref: str, *, prefix: str) -> tuple[Path, str]:
    """Export `ref` into a new temporary directory; returns it and the short commit."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", f"{ref}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    dest = Path(tempfile.mkdtemp(prefix=f"{prefix}_{commit}_"))
    archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", ref], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"git archive {ref} failed")
    return dest, commit
