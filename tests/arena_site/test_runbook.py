"""Every command block of the operator's guides says whether CI runs it (deploy/runbook.py).

docs/deployment.md's blocks marked for CI are run by deploy/smoke_test.py (which fails if
one did not run); the drills block of docs/reliability.md by tests/reliability/test_drills.py.
A block with neither a CI mark nor a reason it is not run fails here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("runbook", ROOT / "deploy" / "runbook.py")
assert _spec and _spec.loader
runbook = importlib.util.module_from_spec(_spec)
sys.modules["runbook"] = runbook
_spec.loader.exec_module(runbook)

# Who runs each block a guide marks for CI.
RUNNERS = {
    "deployment.md": (ROOT / "deploy" / "smoke_test.py", ROOT / "deploy" / "smoke_upgrade.py"),
    "reliability.md": (ROOT / "tests" / "reliability" / "test_drills.py",),
    "scaling.md": (),
}


@pytest.mark.parametrize("guide", sorted(RUNNERS))
def test_every_block_is_marked_and_its_runner_names_it(guide):
    blocks = runbook.blocks(ROOT / "docs" / guide)
    assert blocks
    runners = "\n".join(p.read_text() for p in RUNNERS[guide])
    for block in blocks:
        if block.name is not None:
            assert f'"{block.name}"' in runners, (guide, block.line, block.name)


def test_an_unmarked_block_is_refused(tmp_path):
    doc = tmp_path / "guide.md"
    doc.write_text("Some text.\n\n```sh\nrm -rf /\n```\n")
    with pytest.raises(ValueError, match="without a CI mark"):
        runbook.blocks(doc)


def test_the_guide_paths_are_replaced_and_sudo_runs_as_the_caller(tmp_path):
    doc = tmp_path / "guide.md"
    doc.write_text(
        "_CI runs this block: demo._\n\n```sh\n"
        "sudo install -d -m 750 -o root -g arena /etc/arena\n"
        "sudo -u arena sh -c 'echo arena.example.org > /etc/arena/host'\n```\n"
    )
    rb = runbook.Runbook(tmp_path / "root", host="arena.test", path=doc)
    rb.run("demo", env={"PATH": "/usr/bin:/bin"})
    assert (tmp_path / "root" / "etc" / "arena" / "host").read_text() == "arena.test\n"
    assert rb.unrun() == []
