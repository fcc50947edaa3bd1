"""Slice labels on the 112 real sample battles, and the back-fill after a labeller change
(ingest.relabel, the relabel_battles task and command)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings

from analysis.labels import CONTEXT_BUCKETS, LABELER_VERSION, NATURAL_LANGUAGES, TASK_TYPES
from analysis.labels import programming_language as pl
from catalogue.models import ArenaModel
from core.locks import single_flight
from ingest.models import Battle, CodeContext, Privacy
from ingest.relabel import file_type_version, relabel_stale_battles, stale_battles
from ingest.tasks import relabel_battles
from tests.analysis.data.sample_battles import load_sample_battles
from tests.factories import BattleFactory

from .conftest import run

SAMPLE = Path(settings.BASE_DIR) / "data" / "copilot-arena-sample" / "copilot_arena_examples_v1.csv"
HAND_LABELS = json.loads(
    (Path(__file__).parents[1] / "analysis" / "data" / "sample_task_labels.json").read_text()
)["labels"]
LABELS = ("language", "natural_language", "context_tokens", "context_bucket", "task_type")


@pytest.fixture
def sample(catalogue):
    out = run("import_battles", str(SAMPLE), "--quiet-progress")
    assert "112 imported" in out and "1 rejected" in out  # data row 23 is malformed


def _battle_of_row(index: int) -> Battle:
    row = next(b for b in load_sample_battles() if b.index == index)
    return CodeContext.objects.get(prefix=row.prefix, suffix=row.suffix).battle


def test_every_sample_battle_is_labelled_at_import(sample):
    battles = Battle.objects.all()
    assert battles.count() == 112
    for b in battles:
        assert b.labeler_version == LABELER_VERSION
        assert b.task_type in TASK_TYPES
        assert b.context_bucket in CONTEXT_BUCKETS
        assert b.natural_language in NATURAL_LANGUAGES
        assert b.context_tokens and b.context_tokens > 0
        assert b.language == "other"  # the sample CSV carries no file type
    assert not stale_battles().exists()
    # The mix is not degenerate: several task types and both short and longer contexts.
    assert len(set(battles.values_list("task_type", flat=True))) >= 5
    assert {"<1k", "1-4k"} <= set(battles.values_list("context_bucket", flat=True))


@pytest.mark.parametrize(
    ("index", "task_type", "natural_language"),
    [
        (0, "frontend", "en"),  # VS Code extension: commands, views, editor selection
        (1, "algorithmic", "en"),  # C++ binary search tree exercise
        (2, "data_ml", "en"),  # plotly figure builder
        (10, "backend", "unknown"),
        (37, "systems", "en"),
    ],
)
def test_known_snippets_are_labelled_as_hand_labelled(sample, index, task_type, natural_language):
    assert HAND_LABELS[str(index)]["label"] == task_type and HAND_LABELS[str(index)]["confident"]
    battle = _battle_of_row(index)
    assert battle.task_type == task_type
    assert battle.natural_language == natural_language


def test_relabel_recomputes_research_battles_from_their_code(sample):
    truth = {b.pk: tuple(getattr(b, f) for f in LABELS) for b in Battle.objects.all()}
    Battle.objects.update(
        labeler_version="pl0.nl0.ctx0.task0",
        task_type="other",
        natural_language="xx",
        context_tokens=None,
        context_bucket="unknown",
        language="python",
    )
    assert stale_battles().count() == 112
    seen = []
    report = relabel_stale_battles(chunk_size=25, on_chunk=lambda r: seen.append(r.examined))
    assert seen == [25, 50, 75, 100, 112]
    assert (report.examined, report.from_code, report.from_file_type) == (112, 112, 0)
    assert report.changed == 112 and report.chunks == 5
    after = {b.pk: tuple(getattr(b, f) for f in LABELS) for b in Battle.objects.all()}
    assert after == truth
    assert set(Battle.objects.values_list("labeler_version", flat=True)) == {LABELER_VERSION}
    assert relabel_stale_battles().examined == 0


def test_battles_without_code_keep_their_content_labels(catalogue):
    a, b, c = ArenaModel.objects.order_by("key")[:3]
    private = BattleFactory(
        model_a=a,
        model_b=b,
        privacy=Privacy.PRIVATE,
        file_type="typescriptreact",
        language="other",
        natural_language="de",
        context_tokens=5000,
        context_bucket="4-16k",
        task_type="backend",
        labeler_version="pl0.nl7.ctx3.task9",
    )
    legacy = BattleFactory(model_a=a, model_b=c, file_type="py", labeler_version="")
    current = BattleFactory(
        model_a=b, model_b=c, file_type="go", language="go", labeler_version=LABELER_VERSION
    )
    assert set(stale_battles().values_list("pk", flat=True)) == {private.pk, legacy.pk}
    report = relabel_stale_battles()
    assert (report.examined, report.from_code, report.from_file_type) == (2, 0, 2)
    private.refresh_from_db()
    assert private.language == "typescript"
    assert (private.natural_language, private.context_tokens) == ("de", 5000)
    assert (private.context_bucket, private.task_type) == ("4-16k", "backend")
    assert private.labeler_version == f"pl{pl.VERSION}.nl7.ctx3.task9"
    legacy.refresh_from_db()
    assert (
        legacy.language == "python" and legacy.labeler_version == f"pl{pl.VERSION}.nl0.ctx0.task0"
    )
    current.refresh_from_db()
    assert current.labeler_version == LABELER_VERSION
    # Not picked up again until the programming-language labeller changes once more.
    assert not stale_battles().exists()


def test_version_strings():
    assert file_type_version(LABELER_VERSION) == LABELER_VERSION
    assert file_type_version("pl0.nl2.ctx3.task4") == f"pl{pl.VERSION}.nl2.ctx3.task4"
    assert file_type_version("garbage") == f"pl{pl.VERSION}.nl0.ctx0.task0"
    assert len(file_type_version("pl0.nl22.ctx33.task44")) <= 32  # Battle.labeler_version


def test_the_task_relabels_and_respects_the_lock(sample, monkeypatch):
    Battle.objects.update(labeler_version="old", task_type="other")
    queued = []
    from leaderboard import tasks as lb_tasks

    monkeypatch.setattr(lb_tasks.recompute_leaderboard, "delay", lambda **kw: queued.append(kw))
    with single_flight("relabel", timeout=60) as mine:
        assert mine
        assert relabel_battles.apply(kwargs={"chunk_size": 50}).get() is None
    assert stale_battles().count() == 112
    result = relabel_battles.apply(kwargs={"chunk_size": 50}).get()
    assert result["examined"] == 112 and result["from_code"] == 112 and result["changed"] > 0
    assert queued == [{"trigger": "relabel"}]  # the boards follow the new labels
    assert relabel_battles.apply().get()["examined"] == 0
    assert queued == [{"trigger": "relabel"}]  # nothing changed: no second recompute


def test_the_command(sample):
    assert "0 battle(s) to relabel" in run("relabel_battles", "--dry-run")
    Battle.objects.update(labeler_version="old")
    assert "112 battle(s) to relabel" in run("relabel_battles", "--dry-run")
    assert stale_battles().count() == 112
    out = run("relabel_battles", "--chunk-size", "40", "--limit", "50")
    assert "Relabelled 50 battle(s)" in out and "50 from their stored code" in out
    out = run("relabel_battles")
    assert "Relabelled 62 battle(s)" in out and "0 changed" in out
    assert not stale_battles().exists()
