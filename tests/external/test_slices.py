"""Win rates by slice: /slices/ and GET /api/v1/slices on real recomputed snapshots.

Checks that the pairwise counts rebuilt from the stored matrices equal the SQL aggregation
the recompute read, and that the whole pipeline (battles -> recompute -> page) finds a
planted ranking reversal and does not find one that is not there.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from analysis.grouping import OUTCOME_A, OUTCOME_TIE
from analysis.labels import TASK_TYPES
from analysis.matrices import battle_count_matrix, win_fraction_matrix
from analysis.slice_test import PairCounts, slice_test
from catalogue.models import ArenaModel, Visibility
from ingest.models import Battle, BattleKind, BattleSource, Outcome, Privacy
from leaderboard.aggregation import aggregate
from leaderboard.models import RatingConfig, SnapshotRow
from leaderboard.recompute import recompute


def test_api_table_matches_the_stored_boards(api, published):
    body = api.get("/api/v1/slices?dimension=task_type").json()
    assert body["snapshot"]["id"] == published.pk and body["label"] == "Task type"
    values = [v["value"] for v in body["values"]]
    assert values == [t for t in TASK_TYPES if t in values]  # the taxonomy's order
    assert len(values) >= 5
    rows = {
        (r.model.key, r.slice.value): r
        for r in SnapshotRow.objects.filter(
            slice__snapshot=published, slice__dimension="task_type", public=True
        ).select_related("model", "slice")
    }
    cells = 0
    for m in body["models"]:
        for value, cell in zip(values, m["cells"], strict=True):
            row = rows.get((m["model"], value))
            if row is None:
                assert cell is None
                continue
            cells += 1
            assert cell["rating"] == row.rating and cell["votes"] == row.votes
            assert cell["ci_lower"] <= cell["rating"] <= cell["ci_upper"]
    assert cells == len(rows)
    test = body["test"]
    assert test["df"] > 0 and 0 <= test["p_value"] <= 1
    assert {"statistic", "dispersion", "residual_df", "rms_shift", "noise_rms"} <= set(test)
    assert [v["value"] for v in test["values"]] == values
    assert all(-1 <= v["kendall_tau"] <= 1 for v in test["values"])
    assert "ratings" not in test["values"][0] and "pooled_ratings" not in test


def test_counts_from_the_snapshot_equal_the_sql_aggregation(published):
    # The page rebuilds pair counts from stored (rounded) matrices; the recompute read them
    # from SQL. Both must give the same statistic.
    from leaderboard.slice_selectors import slice_analysis

    stored = slice_analysis(dimension="context_bucket")["test"]
    config = RatingConfig.current()
    cells = aggregate()
    keys = dict(ArenaModel.objects.values_list("id", "key"))
    direct = {}
    for value in cells.values("context_bucket"):
        mask = cells.mask("context_bucket", value)
        if int(cells.count[mask].sum()) < config.slice_min_battles:
            continue
        grouped = cells.grouped(mask, keys, min_votes=config.min_model_votes)
        direct[value] = PairCounts(
            grouped.models,
            battle_count_matrix(grouped),
            np.nan_to_num(win_fraction_matrix(grouped)) * battle_count_matrix(grouped),
        )
    result = slice_test(direct)
    assert stored["statistic"] == pytest.approx(result.statistic, rel=1e-4, abs=1e-3)
    assert stored["df"] == result.df
    assert stored["dispersion"] == pytest.approx(result.dispersion, rel=1e-4)
    assert stored["p_value"] == pytest.approx(result.p_value, rel=1e-3, abs=1e-6)


def _battles(ratings: dict[str, dict[str, float]], per_value: int, seed: int) -> None:
    """Battles between the demo models whose strengths depend on the task type."""
    rng = np.random.default_rng(seed)
    ids = dict(ArenaModel.objects.values_list("key", "id"))
    rows = []
    for value, strength in ratings.items():
        keys = list(strength)
        a = rng.integers(0, len(keys), per_value)
        b = (a + rng.integers(1, len(keys), per_value)) % len(keys)
        r = np.array([strength[k] for k in keys])
        top_wins = rng.random(per_value) < 1 / (1 + 10 ** ((r[b] - r[a]) / 400))
        for i in range(per_value):
            pair = f"{value}-{seed}-{i}"
            rows.append(
                Battle(
                    pair_id=pair,
                    user_hash=hashlib.sha256(f"u{i % 97}".encode()).hexdigest(),
                    model_a_id=ids[keys[a[i]]],
                    model_b_id=ids[keys[b[i]]],
                    outcome=Outcome.A if top_wins[i] else Outcome.B,
                    kind=BattleKind.COMPLETION,
                    privacy=Privacy.PRIVATE,
                    source=BattleSource.API,
                    content_hash=hashlib.sha256(pair.encode()).hexdigest(),
                    task_type=value,
                )
            )
    Battle.objects.bulk_create(rows, batch_size=2000)


FOUR = ["codestral-2405", "gpt-4o-2024-08-06", "deepseek-coder-fim", "gemini-1.5-pro-002"]


def test_a_planted_reversal_is_found_end_to_end(api, fast_config, aliases):
    up = dict(zip(FOUR, [150.0, 50.0, -50.0, -150.0], strict=True))
    down = {k: -v for k, v in up.items()}
    _battles({"frontend": up, "backend": down, "data_ml": up}, per_value=1500, seed=1)
    recompute(trigger="test")
    test = api.get("/api/v1/slices?dimension=task_type").json()["test"]
    # Four models leave only 3 residual df per value to estimate the dispersion, so the F
    # test is far less extreme than the statistic itself.
    assert test["scaled_statistic"] > 200 and test["residual_df"] == 9
    assert test["p_value"] < 1e-6
    assert test["rms_shift"] > 5 * test["noise_rms"]
    tau = {v["value"]: v["kendall_tau"] for v in test["values"]}
    # Two of three values agree with the overall order, the reversed one is its opposite.
    assert tau["frontend"] == tau["data_ml"] == 1.0 and tau["backend"] == -1.0
    language = api.get("/api/v1/slices?dimension=language").json()
    assert [v["value"] for v in language["values"]] == ["other"]
    assert language["test"]["p_value"] is None  # one value: nothing to compare


def test_no_reversal_no_detection(api, fast_config, aliases):
    same = dict(zip(FOUR, [150.0, 50.0, -50.0, -150.0], strict=True))
    _battles({"frontend": same, "backend": same, "data_ml": same}, per_value=1500, seed=2)
    recompute(trigger="test")
    test = api.get("/api/v1/slices?dimension=task_type").json()["test"]
    assert test["p_value"] > 0.01
    assert test["rms_shift"] < 2 * test["noise_rms"]


def test_private_models_stay_off_the_page_but_count_in_the_test(api, fast_config, aliases):
    same = dict(zip(FOUR, [150.0, 50.0, -50.0, -150.0], strict=True))
    _battles({"frontend": same, "backend": same}, per_value=800, seed=3)
    ArenaModel.objects.filter(key="gemini-1.5-pro-002").update(visibility=Visibility.PRIVATE)
    recompute(trigger="test")
    body = api.get("/api/v1/slices?dimension=task_type").json()
    assert "gemini-1.5-pro-002" not in [m["model"] for m in body["models"]]
    assert body["test"]["models"] == 4
    assert "gemini" not in str(body["test"]).lower()


def test_page_and_errors(client, api, published):
    html = client.get("/slices/").content.decode()
    assert "Does task type change the ranking?" in html
    assert "χ² = " in html and "df = " in html and "F test" in html
    assert 'id="slice-table"' in html and 'id="chart-slice-ratings"' in html
    assert 'id="chart-slice-tau"' in html and "Simulated data" in html
    for dimension in ("kind", "language", "context_bucket", "natural_language"):
        page = client.get(f"/slices/?dimension={dimension}")
        assert page.status_code == 200, dimension
    assert client.get("/slices/?dimension=planet").status_code == 404
    r = api.get("/api/v1/slices?dimension=planet")
    assert r.status_code == 404 and r.json()["error"] == "not_found"
    assert "one of: kind, language" in r.json()["message"]


def test_before_any_board(client, api, db):
    assert b"No leaderboard has been computed yet" in client.get("/slices/").content
    r = api.get("/api/v1/slices")
    assert r.status_code == 404 and "No leaderboard" in r.json()["message"]


def test_outcome_codes_used_above_match_the_engine():
    # _battles writes Outcome.A for a top win; the engine reads it as OUTCOME_A.
    assert (int(Outcome.A), OUTCOME_A, OUTCOME_TIE) == (0, 0, 2)
