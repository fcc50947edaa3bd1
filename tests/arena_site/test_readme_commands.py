"""README's "Data and commands" list runs top to bottom as written, on the demo database,
and each command says what it did in one summary on stdout."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PREFIX = ".venv/bin/python manage.py "
CLEAN = {
    k: v
    for k, v in os.environ.items()
    if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DEBUG")
}


def readme_commands() -> list[list[str]]:
    """The manage.py lines of the first code block under "## Data and commands", optional
    [parts] left out, comments dropped (the `make manage` line is interactive: not run)."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Data and commands", 1)[1]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    out = []
    for line in block.splitlines():
        if not line.startswith(PREFIX):
            continue
        line = re.sub(r"\s+#.*$", "", line[len(PREFIX) :])
        out.append(shlex.split(re.sub(r"\[[^\]]*\]", "", line)))
    return out


def test_the_list_is_what_the_readme_shows():
    names = [c[0] for c in readme_commands()]
    assert names.index("export_battles") < names.index("import_battles", 2)
    assert len(names) == 9


@pytest.mark.integration
def test_readme_commands_run_in_order_on_the_demo_database(tmp_path):
    env = {
        **CLEAN,
        "SQLITE_PATH": str(tmp_path / "demo.sqlite3"),
        "ARENA_RELEASES_ROOT": str(tmp_path / "releases"),
    }
    (tmp_path / "arena_site").symlink_to(ROOT / "arena_site")  # the README's relative paths

    def manage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    assert manage("migrate", "--noinput").returncode == 0
    assert manage("load_demo", "--simulated", "3000").returncode == 0
    outputs = {}
    for command in readme_commands():
        result = manage(*command)
        assert result.returncode == 0, (command, result.stdout, result.stderr)
        summary = result.stdout.strip().splitlines()
        assert len(summary) >= 1, (command, result.stderr)
        assert "\x1b[31" not in result.stderr  # nothing in the error style
        outputs[" ".join(command)] = result
    assert (tmp_path / "export.jsonl").stat().st_size > 0
    export = outputs["export_battles -o export.jsonl"]
    assert export.stdout.startswith("Exported ") and "export.jsonl" in export.stdout
    assert export.stderr.strip() == ""
    # After the simulated battles are deleted, 112 real battles leave most models below the
    # vote minimum: the recompute says so, and says its result once.
    recompute = outputs["recompute_leaderboard"]
    text = recompute.stdout + recompute.stderr
    assert text.count("Published snapshot") == 1
    found = re.search(
        r"(\d+) model\(s\) rated.*\. (\d+) public model\(s\) with votes are below the "
        r"30-vote minimum",
        recompute.stdout,
    )
    assert found, recompute.stdout
    rated, below = int(found[1]), int(found[2])
    assert below > rated and rated + below <= 11
