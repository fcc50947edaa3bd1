"""The command blocks of docs/deployment.md, read out of the file and run as they are written.

Every fenced block with a language in the guide is preceded by a mark: "_CI runs this
block: NAME._" or "_Not run in CI: WHY._" (`blocks` refuses an unmarked one; the smoke
test fails unless it ran every block marked for CI). `Runbook.run(name)` runs one block
with bash, in the smoke test's temporary directory instead of the machine's: each of
`PATHS` is replaced by a directory below `root` (every one must occur as often as the
guide writes it: `replace` counts), `sudo [-u USER]` runs the command as the caller (a
shell function) and `install -o/-g` keeps the caller's ownership. Standard library only.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "deployment.md"
RUN = re.compile(r"^\s*_CI runs this block: ([a-z-]+)\b.*")
NOT_RUN = re.compile(r"^\s*_Not run in CI: \S.*")
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
# The guide's paths, each a directory of the run's own (see the module docstring).
PATHS = (
    "/srv/arena",
    "/etc/arena",
    "/tmp/code-arena",
    "/tmp/dist",
    "/tmp/build",
    "/run/arena",
    "/var/backups/arena",
)
PRELUDE = r"""
set -euo pipefail
sudo() {
  while [ $# -gt 0 ]; do
    case "$1" in -u|-g) shift 2 ;; -*) shift ;; *) break ;; esac
  done
  "$@"
}
install() {
  local args=()
  while [ $# -gt 0 ]; do
    case "$1" in -o|-g) shift 2 ;; *) args+=("$1"); shift ;; esac
  done
  command install "${args[@]}"
}
"""


@dataclass(frozen=True)
class Block:
    name: str | None  # None: not run in CI
    language: str
    text: str
    line: int


def blocks(path: Path = GUIDE) -> list[Block]:
    """Every fenced block with a language, with its mark; ValueError naming an unmarked one."""
    lines = path.read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, language = opening.groups()
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        body = "\n".join(line[len(indent) :] for line in lines[i + 1 : end])
        if language:
            mark = _mark_before(lines, i)
            run = RUN.match(mark)
            if not run and not NOT_RUN.match(mark):
                raise ValueError(f"{path.name}:{i + 1}: a ```{language} block without a CI mark")
            found.append(Block(run.group(1) if run else None, language, body, i + 1))
        i = end + 1
    return found


def _mark_before(lines: list[str], fence: int) -> str:
    """The first line of the paragraph just above the block (a mark may wrap)."""
    j = fence - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    while j > 0 and lines[j - 1].strip():
        j -= 1
    return lines[j] if j >= 0 else ""


def replace(text: str, old: str, new: str, count: int | None = None) -> str:
    found = text.count(old)
    if found == 0 or (count is not None and found != count):
        raise SystemExit(f"runbook: expected {old!r} in the block ({found} found)")
    return text.replace(old, new)


class Runbook:
    def __init__(self, root: Path, *, host: str, path: Path = GUIDE) -> None:
        self.root, self.host = root, host
        root.mkdir(parents=True, exist_ok=True)
        self.blocks = {b.name: b for b in blocks(path) if b.name}
        self.ran: set[str] = set()

    def where(self, guide_path: str) -> Path:
        """The run's directory for one of the guide's paths (`/srv/arena` -> root/srv/arena)."""
        return self.root / guide_path.lstrip("/")

    def text(self, name: str) -> str:
        """The block's text with the run's paths and host name."""
        text = self.blocks[name].text
        for path in PATHS:
            if path in text:
                text = text.replace(path, str(self.where(path)))
        return text.replace("arena.example.org", self.host)

    def run(self, name: str, *, env: dict[str, str], cwd: Path | None = None) -> str:
        self.ran.add(name)
        result = subprocess.run(
            ["bash", "-c", PRELUDE + self.text(name)],
            env=env, cwd=cwd or self.root, capture_output=True, text=True,
        )  # fmt: skip
        if result.returncode != 0:
            raise SystemExit(
                f"runbook: docs/deployment.md block {name!r} failed ({result.returncode}):\n"
                f"{self.text(name)}\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n"
                f"{result.stderr[-3000:]}"
            )
        return result.stdout

    def commands(self, name: str) -> list[str]:
        """The block's command lines, comments and blank lines dropped (for `processes`)."""
        self.ran.add(name)
        lines = [x.strip() for x in self.text(name).replace("\\\n", " ").splitlines()]
        return [x for x in lines if x and not x.startswith("#")]

    def unrun(self) -> list[str]:
        return sorted(set(self.blocks) - self.ran)
