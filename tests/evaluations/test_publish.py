"""Finished runs become external boards, and the correlations page correlates them.

Four models answer 4, 3, 2 and 1 of four HumanEval problems correctly; their arena ratings
are in the same order, so the board's Spearman correlation with the arena is exactly 1 and
the values are the scripted 100/75/50/25 %.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluations import driver, services
from evaluations.models import RunStatus, Suite
from evaluations.publish import release_of
from external.models import CorrelationResult, ExternalBoard, ExternalScore
from external.services import compute_correlations
from tests.evaluations.conftest import add_model
from tests.evaluations.scripts import humaneval_answers, infill_answers
from tests.external.test_correlations import make_snapshot

RATINGS = {"m-best": 1100.0, "m-good": 1050.0, "m-fair": 1000.0, "m-poor": 950.0}


def finished(**kwargs):
    run = services.create_run(concurrency=1, **kwargs)
    assert driver.drive(run.pk) == RunStatus.DONE
    run.refresh_from_db()
    return run


@pytest.fixture
def four_models(db, stub, eval_settings):
    models = {}
    for right, key in zip((4, 3, 2, 1), RATINGS, strict=True):
        stub.behave(key, answers=humaneval_answers({i: None for i in range(right)}))
        models[key] = add_model(key, stub, visibility="public")
    return models


def test_each_models_latest_run_is_one_score_on_the_suites_board(four_models, stub):
    runs = {k: finished(suite=Suite.HUMANEVAL, model=m, limit=4) for k, m in four_models.items()}
    board = ExternalBoard.objects.get(source__key="local-humaneval")
    assert board.source.name == "HumanEval pass@1 (local)"
    assert (board.metric, board.release) == ("pass@1", "HumanEval, first 4")
    scores = dict(board.scores.values_list("name", "value"))
    assert scores == {"m-best": 100.0, "m-good": 75.0, "m-fair": 50.0, "m-poor": 25.0}
    assert set(board.scores.values_list("match", flat=True)) == {"key"}
    assert board.scores.get(name="m-best").extra == {"run": runs["m-best"].pk, "items": 4}
    # A newer run of the same kind replaces the model's score; other models keep theirs.
    stub.behave("m-poor", answers=humaneval_answers({0: None, 1: None, 2: None}))
    newer = finished(suite=Suite.HUMANEVAL, model=four_models["m-poor"], limit=4)
    board.refresh_from_db()
    assert dict(board.scores.values_list("name", "value"))["m-poor"] == 75.0
    assert board.scores.get(name="m-poor").extra["run"] == newer.pk
    assert board.scores.count() == 4
    # A run over another number of items is another board (not comparable).
    finished(suite=Suite.HUMANEVAL, model=four_models["m-best"], limit=2)
    assert ExternalBoard.objects.filter(source__key="local-humaneval").count() == 2


def test_the_boards_are_correlated_with_the_arena(four_models, client):
    for model in four_models.values():
        finished(suite=Suite.HUMANEVAL, model=model, limit=4)
    snapshot = make_snapshot({"overall": RATINGS})
    compute_correlations(snapshot_id=snapshot.pk)
    result = CorrelationResult.objects.get(
        snapshot=snapshot, slice_key="overall", board__source__key="local-humaneval"
    )
    assert result.n == 4
    assert result.spearman == pytest.approx(1.0)
    page = client.get(reverse("correlations"))
    assert page.status_code == 200
    assert "HumanEval pass@1 (local)" in page.content.decode()


def test_infilling_publishes_pass_at_1_and_the_well_formatted_rate(db, stub, eval_settings):
    model = add_model("fim", stub)
    # Two right middles, and one that is only a markdown fence: the clean-up strips it and
    # nothing is left to insert ("empty"). 2/3 pass, 2/3 well-formatted.
    stub.behave("fim", answers=infill_answers({0: None, 1: "```\n", 2: None}))
    run = finished(suite=Suite.INFILLING, model=model, limit=3)
    assert release_of(run) == "random-span-light, first 3"
    boards = {b.metric: b for b in ExternalBoard.objects.filter(source__key="local-infilling")}
    assert set(boards) == {"pass@1", "well_formatted"}
    score = ExternalScore.objects.get
    assert score(board=boards["pass@1"], name="fim").value == pytest.approx(200 / 3)
    assert score(board=boards["well_formatted"], name="fim").value == pytest.approx(200 / 3)
    assert run.summary["issues"] == {"empty": 1}
    assert run.summary["answered"] == 3
