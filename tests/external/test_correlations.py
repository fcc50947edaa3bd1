"""Correlations: values against scipy on a hand-made snapshot, which models count, the task
after each published snapshot, GET /api/v1/correlations and the pages."""

from __future__ import annotations

import numpy as np
import pytest
from django.utils import timezone
from scipy import stats

from catalogue.models import ArenaModel, Visibility
from external import tasks
from external.models import CorrelationResult, ExternalBoard, ExternalScore, ExternalSource
from external.services import compute_correlations, import_demo_scores
from leaderboard.models import Snapshot, SnapshotRow, SnapshotSlice
from leaderboard.recompute import recompute

from .conftest import BENCH, run

# Arena ratings and an external score with ties in both, for six catalogue models.
ARENA = {
    "deepseek-coder-fim": 1030.0,
    "claude-3-5-sonnet-20240620": 1018.0,
    "codestral-2405": 1000.0,
    "gemini-1.5-pro-002": 982.0,
    "gpt-4o-2024-08-06": 982.0,
    "gpt-4o-mini-2024-07-18": 941.0,
}
SCORES = {
    "deepseek-coder-fim": 52.0,
    "claude-3-5-sonnet-20240620": 61.0,
    "codestral-2405": 40.0,
    "gemini-1.5-pro-002": 40.0,
    "gpt-4o-2024-08-06": 47.5,
    "gpt-4o-mini-2024-07-18": 33.0,
    "qwen-2.5-coder-32b-instruct": 99.0,  # not on the arena board
}


def make_snapshot(boards: dict[str, dict[str, float]], *, private=(), seed: int = 3) -> Snapshot:
    """A published snapshot with the given ratings per slice key (no battles behind it)."""
    snap = Snapshot.objects.create(
        status=Snapshot.Status.PUBLISHED, computed_at=timezone.now(), method="bootstrap", seed=seed
    )
    for key, ratings in boards.items():
        dimension, _, value = key.partition(":")
        keys = list(ratings)
        empty = [[None] * len(keys) for _ in keys]
        s = SnapshotSlice.objects.create(
            snapshot=snap,
            key=key,
            dimension=dimension,
            value=value,
            battles=500,
            models_order=keys,
            matrices={"win_fraction": empty, "battle_count": empty, "predicted_win_rate": empty},
        )
        for rank, (model, rating) in enumerate(ratings.items(), start=1):
            SnapshotRow.objects.create(
                slice=s,
                model=ArenaModel.objects.get(key=model),
                public=model not in private,
                rating=rating,
                ci_lower=rating - 10,
                ci_upper=rating + 10,
                rank=rank,
                votes=100,
                status="ok",
            )
    return snap


def make_board(scores: dict[str, float], *, metric: str = "m1") -> ExternalBoard:
    source, _ = ExternalSource.objects.get_or_create(
        key="livebench", defaults={"name": "LiveBench", "kind": "static"}
    )
    board = ExternalBoard.objects.create(
        source=source, metric=metric, label=f"LiveBench {metric}", imported_at=timezone.now()
    )
    for name, value in scores.items():
        model = ArenaModel.objects.filter(key=name).first()
        ExternalScore.objects.create(board=board, name=name, value=value, model=model, match="key")
    ExternalScore.objects.create(board=board, name="someone else", value=10.0)
    return board


def test_values_match_scipy_on_a_hand_made_case(catalogue):
    snap = make_snapshot({"overall": ARENA})
    board = make_board(SCORES)
    assert compute_correlations(snapshot_id=snap.pk) == 1
    r = CorrelationResult.objects.get(snapshot=snap, slice_key="overall", board=board)
    common = sorted(ARENA)  # the six models both cover, in the order correlate() uses
    x = [ARENA[k] for k in common]
    y = [SCORES[k] for k in common]
    rho, pr = stats.spearmanr(x, y), stats.pearsonr(x, y)
    assert r.n == 6
    assert r.spearman == pytest.approx(rho.statistic, abs=1e-12)
    assert r.spearman_p == pytest.approx(rho.pvalue, rel=1e-9)
    assert r.pearson == pytest.approx(pr.statistic, abs=1e-12)
    assert r.pearson_p == pytest.approx(pr.pvalue, rel=1e-9)
    assert -1 <= r.spearman_lower <= r.spearman <= r.spearman_upper <= 1
    assert -1 <= r.pearson_lower <= r.pearson <= r.pearson_upper <= 1
    # Fisher z on six models: tanh(atanh(r) -+ 1.96 / sqrt(3))
    half = stats.norm.ppf(0.975) / 3**0.5
    assert r.pearson_lower == pytest.approx(np.tanh(np.arctanh(pr.statistic) - half))
    assert r.pearson_upper == pytest.approx(np.tanh(np.arctanh(pr.statistic) + half))
    assert sorted(p["model"] for p in r.points) == common
    point = next(p for p in r.points if p["model"] == "gpt-4o-2024-08-06")
    assert point == {
        "model": "gpt-4o-2024-08-06",
        "display_name": "GPT-4o (Aug 2024)",
        "rating": 982.0,
        "score": 47.5,
        "name": "gpt-4o-2024-08-06",
    }
    # Same data: the same interval.
    first = (r.spearman_lower, r.spearman_upper)
    compute_correlations(snapshot_id=snap.pk)
    again = CorrelationResult.objects.get(snapshot=snap, slice_key="overall", board=board)
    assert (again.spearman_lower, again.spearman_upper) == first
    assert CorrelationResult.objects.count() == 1


def test_private_models_inactive_boards_and_non_task_slices_are_left_out(catalogue):
    frontend = {k: v + (30 if "mini" in k else 0) for k, v in ARENA.items()}
    snap = make_snapshot(
        {"overall": ARENA, "task_type:frontend": frontend, "language:python": ARENA},
        private=("codestral-2405",),
    )
    board = make_board(SCORES)
    inactive = make_board(SCORES, metric="m2")
    inactive.active = False
    inactive.save()
    compute_correlations(snapshot_id=snap.pk)
    keys = set(CorrelationResult.objects.values_list("slice_key", "board__metric"))
    assert keys == {("overall", "m1"), ("task_type:frontend", "m1")}
    r = CorrelationResult.objects.get(slice_key="task_type:frontend", board=board)
    assert r.n == 5 and "codestral-2405" not in [p["model"] for p in r.points]
    common = sorted(k for k in ARENA if k != "codestral-2405")
    expected = stats.spearmanr([frontend[k] for k in common], [SCORES[k] for k in common])
    assert r.spearman == pytest.approx(expected.statistic)


def test_too_few_common_models_gives_no_value(catalogue):
    snap = make_snapshot({"overall": ARENA})
    make_board({"codestral-2405": 1.0, "gpt-4o-2024-08-06": 2.0})
    compute_correlations(snapshot_id=snap.pk)
    r = CorrelationResult.objects.get()
    assert r.n == 2 and r.spearman is None and r.pearson_lower is None


def test_no_snapshot_no_correlations(db):
    assert compute_correlations() == 0


# ---------------------------------------------------------------- after each recompute


def test_each_published_snapshot_gets_its_correlations(
    published, monkeypatch, django_capture_on_commit_callbacks
):
    import_demo_scores()
    calls = []

    def run_now(**kwargs):
        calls.append(kwargs)
        return tasks.compute_correlations_task.apply(kwargs=kwargs).get()

    monkeypatch.setattr(tasks.compute_correlations_task, "delay", run_now)
    with django_capture_on_commit_callbacks(execute=True):
        snap = recompute(trigger="test")
    assert {"snapshot_id": snap.pk} in calls
    rows = CorrelationResult.objects.filter(snapshot=snap)
    slices = set(rows.values_list("slice_key", flat=True))
    assert "overall" in slices and any(s.startswith("task_type:") for s in slices)
    assert rows.filter(slice_key="overall").count() == 14  # every demo board
    arena = rows.get(slice_key="overall", board__source__key="chatbot_arena")
    # claude-3-5-sonnet-20241022 has no battles in the demo, and Arena has no Codestral row.
    assert arena.n == 9
    assert arena.spearman is not None and arena.spearman_lower < arena.spearman_upper


def test_a_broker_failure_does_not_fail_the_recompute(
    published, monkeypatch, django_capture_on_commit_callbacks
):
    def broken(**kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.compute_correlations_task, "delay", broken)
    with django_capture_on_commit_callbacks(execute=True):
        snap = recompute(trigger="test")
    assert snap.status == Snapshot.Status.PUBLISHED
    assert not CorrelationResult.objects.filter(snapshot=snap).exists()


# ----------------------------------------------------------------------------- the API


@pytest.fixture
def correlated(published):
    import_demo_scores()
    compute_correlations(snapshot_id=published.pk)
    return published


def test_api_shape_and_filters(api, correlated):
    body = api.get("/api/v1/correlations").json()
    assert body["snapshot"]["id"] == correlated.pk and body["pending"] is False
    assert body["slices"][0] == "overall"
    assert body["reference"]["values"][0] == {
        "against": "Chatbot Arena (coding)",
        "spearman": 0.62,
        "computed_here": False,
    }
    assert "never had a coding file" in body["reference"]["coding_note"]
    one = next(
        r for r in body["results"] if r["slice"] == "overall" and r["source"] == "chatbot_arena"
    )
    assert set(one) >= {"board", "metric", "release", "n", "spearman", "pearson", "models"}
    assert set(one["spearman"]) == {"value", "ci_lower", "ci_upper", "p_value"}
    assert one["published_spearman"] == "0.48 (overall); 0.62 (coding)"
    deepseek = next(c for c in one["caveats"] if c["name"] == "Deepseek-v2.5")
    assert deepseek["model"] == "deepseek-coder-fim" and "Assumption" in deepseek["note"]
    assert len(one["models"]) == one["n"]
    only = api.get("/api/v1/correlations?slice=overall&source=evalplus").json()["results"]
    assert {r["source"] for r in only} == {"evalplus"} and len(only) == 4
    assert {r["slice"] for r in only} == {"overall"}


def test_api_errors_use_the_error_shape(api, correlated):
    r = api.get("/api/v1/correlations?slice=language:klingon")
    assert r.status_code == 404
    body = r.json()
    assert body["error"] == "not_found" and "Unknown slice 'language:klingon'" in body["message"]
    r = api.get("/api/v1/correlations?source=nowhere")
    assert r.status_code == 404 and "No correlations with source 'nowhere'" in r.json()["message"]


def test_api_before_anything_is_published(api, db):
    r = api.get("/api/v1/correlations")
    assert r.status_code == 404 and r.json()["message"] == "No leaderboard has been published yet."


def test_api_shows_the_previous_results_while_the_new_ones_are_pending(api, correlated):
    newer = recompute(trigger="test")  # in a test transaction: no on-commit task ran
    body = api.get("/api/v1/correlations").json()
    assert body["pending"] is True and body["snapshot"]["id"] == correlated.pk
    compute_correlations(snapshot_id=newer.pk)
    body = api.get("/api/v1/correlations").json()
    assert body["pending"] is False and body["snapshot"]["id"] == newer.pk


def test_new_imports_show_after_the_correlations_are_recomputed(
    api, published, django_capture_on_commit_callbacks
):
    run("import_external_scores", "evalplus", str(BENCH / "evalplus/results.json"))
    compute_correlations(snapshot_id=published.pk)
    assert {r["source"] for r in api.get("/api/v1/correlations").json()["results"]} == {"evalplus"}
    arena = BENCH / "chatbot-arena/lmsys_2024_12_31.csv"
    run("import_external_scores", "chatbot_arena", str(arena))
    # The cached answer for this snapshot is dropped once the new results are committed.
    with django_capture_on_commit_callbacks(execute=True):
        compute_correlations(snapshot_id=published.pk)
    sources = {r["source"] for r in api.get("/api/v1/correlations").json()["results"]}
    assert sources == {"evalplus", "chatbot_arena"}


def test_api_is_throttled_like_the_other_reads(api, correlated, settings):
    settings.ARENA_THROTTLE_RATES = {**settings.ARENA_THROTTLE_RATES, "read_ip": "2/min"}
    assert api.get("/api/v1/correlations").status_code == 200
    assert api.get("/api/v1/correlations").status_code == 200
    r = api.get("/api/v1/correlations")
    assert r.status_code == 429 and r.json()["error"] == "throttled"


# --------------------------------------------------------------------------- the pages


def test_correlations_page(client, correlated):
    page = client.get("/correlations/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Chatbot Arena (coding): <strong>0.62</strong>" in html
    assert "never had a coding file" in html
    assert "<strong>0.48</strong>" in html and "≤ 0.1" in html
    assert html.count("<tr>") > 14
    assert 'id="chart-scatter-0"' in html and 'id="chart-arena-by-slice"' in html
    assert "Simulated data" in html  # the banner: the board is simulated
    first_task = next(
        k
        for k in CorrelationResult.objects.values_list("slice_key", flat=True)
        if k.startswith("task_type:")
    )
    assert client.get(f"/correlations/?slice={first_task}").status_code == 200
    assert client.get("/correlations/?slice=language:klingon").status_code == 404


def test_correlations_page_without_results(client, db):
    page = client.get("/correlations/")
    assert page.status_code == 200 and b"No correlations yet" in page.content


def test_external_scores_page(client, correlated):
    html = client.get("/external/").content.decode()
    assert (
        "EvalPlus HumanEval+" in html and "Chatbot Arena overall arena score (2024-12-31)" in html
    )
    assert 'title="as Codestral-22B-v0.1">73.8<' in html
    # A model made private leaves the public score table at once.
    ArenaModel.objects.filter(key="codestral-2405").update(visibility=Visibility.PRIVATE)
    html = client.get("/external/").content.decode()
    assert 'title="as Codestral-22B-v0.1"' not in html
