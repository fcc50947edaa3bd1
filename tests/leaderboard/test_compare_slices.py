"""The compare page per slice (leaderboard/compare_slices.py): hand-made battles, counted here."""

from __future__ import annotations

import datetime as dt
import math
import random
from collections import defaultdict

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalogue.models import ArenaModel
from ingest.models import Outcome
from leaderboard import compare_slices, selectors
from leaderboard.recompute import recompute
from tests.factories import ArenaModelFactory, BattleFactory

from .boards import publish_board

TASKS = ["data_ml", "backend", "other"]
LANGUAGES = ["python", "rust", "cpp"]
CONTEXTS = ["<1k", "1-4k", "4-16k", ">16k"]


def wilson_by_quadratic(score: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson interval as the two roots of (p - x)^2 = z^2 x (1 - x) / n, solved here."""
    p = score / n
    qa = 1 + z * z / n
    qb = -(2 * p + z * z / n)
    qc = p * p
    disc = math.sqrt(qb * qb - 4 * qa * qc)
    return ((-qb - disc) / (2 * qa), (-qb + disc) / (2 * qa))


@pytest.fixture
def arena(db):
    """Alpha and Beta on the board; a key merged into Alpha; battles with a known record."""
    now = timezone.now()
    alpha = ArenaModelFactory(key="alpha", display_name="Alpha")
    beta = ArenaModelFactory(key="beta", display_name="Beta")
    gamma = ArenaModelFactory(key="gamma", display_name="Gamma")
    old_alpha = ArenaModelFactory(key="alpha-old", merged_into=alpha)
    rng = random.Random(7)
    # Alpha's record by (dimension, value): [wins, losses, ties], counted independently.
    expected: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    at = now - dt.timedelta(hours=1)

    def battle(a: ArenaModel, b: ArenaModel, outcome: int, task: str, lang: str, ctx: str, **kw):
        BattleFactory(
            model_a=a,
            model_b=b,
            outcome=outcome,
            task_type=task,
            language=lang,
            context_bucket=ctx,
            received_at=kw.pop("received_at", at),
            **kw,
        )

    for _ in range(150):
        task, lang, ctx = rng.choice(TASKS), rng.choice(LANGUAGES), rng.choice(CONTEXTS)
        outcome = rng.choice(list(Outcome))
        alpha_side = rng.choice([alpha, old_alpha])
        alpha_on_top = rng.random() < 0.5
        if alpha_on_top:
            battle(alpha_side, beta, outcome, task, lang, ctx)
        else:
            battle(beta, alpha_side, outcome, task, lang, ctx)
        if outcome in (Outcome.TIE, Outcome.BOTH_BAD):
            column = 2
        elif (outcome == Outcome.A) == alpha_on_top:
            column = 0
        else:
            column = 1
        for key in (("task_type", task), ("language", lang), ("context_bucket", ctx)):
            expected[key][column] += 1
    # A language with too few battles: summarised, not listed.
    for _ in range(3):
        battle(alpha, beta, Outcome.A, "other", "haskell", "<1k")
        for key in (("task_type", "other"), ("language", "haskell"), ("context_bucket", "<1k")):
            expected[key][0] += 1
    # Not counted: another opponent, an excluded vote, a vote after the board was published.
    for _ in range(20):
        battle(alpha, gamma, Outcome.A, "other", "python", "<1k")
    battle(alpha, beta, Outcome.A, "other", "python", "<1k", excluded=True)
    battle(
        alpha, beta, Outcome.A, "other", "python", "<1k", received_at=now + dt.timedelta(hours=1)
    )
    publish_board(
        at=now,
        models=[alpha, beta, gamma],
        boards={
            "language:python": {alpha: 1100.0, beta: 1000.0},
            "language:rust": {alpha: 1050.0, gamma: 1000.0},  # Beta is not on this board
        },
    )
    return expected


def test_per_slice_records_match_a_count_done_here(arena, settings):
    settings.ARENA_COMPARE_MIN_VOTES = 10
    with CaptureQueriesContext(connection) as queries:
        result = compare_slices.per_slice(a="alpha", b="beta")
    battle_queries = [q for q in queries.captured_queries if "ingest_battle" in q["sql"]]
    assert len(battle_queries) == 1 and "GROUP BY" in battle_queries[0]["sql"]
    assert [d["dimension"] for d in result] == ["task_type", "language", "context_bucket"]
    shown_somewhere = 0
    for d in result:
        values = {v["value"]: v for v in d["values"]}
        mine = {v: rec for (dim, v), rec in arena.items() if dim == d["dimension"]}
        big = {v for v, rec in mine.items() if sum(rec) >= 10}
        assert set(values) == big
        assert d["fewer"] == len(mine) - len(big)
        for value in big:
            wins, losses, ties = mine[value]
            n = wins + losses + ties
            got = values[value]
            assert (got["wins"], got["losses"], got["ties"], got["battles"]) == (
                wins,
                losses,
                ties,
                n,
            )
            assert got["observed"] == pytest.approx((wins + ties / 2) / n)
            lo, hi = wilson_by_quadratic(wins + ties / 2, n)
            assert got["observed_lower"] == pytest.approx(lo, abs=1e-12)
            assert got["observed_upper"] == pytest.approx(hi, abs=1e-12)
            shown_somewhere += 1
    assert shown_somewhere >= 8  # the data are big enough for the checks above to bite
    language = {v["value"]: v for v in result[1]["values"]}
    assert "haskell" not in language and result[1]["fewer"] == 1
    # Predicted from the value's own board; none where Beta is not on it or there is no board.
    assert language["python"]["predicted"] == pytest.approx(1 / (1 + 10 ** (-100 / 400)))
    assert language["rust"]["predicted"] is None and language["cpp"]["predicted"] is None
    # Swapping A and B swaps wins and losses.
    swapped = compare_slices.per_slice(a="beta", b="alpha")
    sw = {v["value"]: v for v in swapped[1]["values"]}
    assert sw["python"]["wins"] == language["python"]["losses"]
    assert sw["python"]["predicted"] == pytest.approx(1 - language["python"]["predicted"])


def test_minimum_is_a_setting(arena, settings):
    settings.ARENA_COMPARE_MIN_VOTES = 1000
    result = compare_slices.per_slice(a="alpha", b="beta")
    assert all(not d["values"] for d in result)
    assert result[1]["fewer"] == 4  # python, rust, cpp, haskell


def test_compare_page_shows_slices_with_human_labels(client, arena, settings):
    settings.ARENA_COMPARE_MIN_VOTES = 10
    r = client.get("/compare/", {"a": "alpha", "b": "beta"})
    html = r.content.decode()
    assert r.status_code == 200
    assert 'id="compare-by-slice"' in html
    for table in ("compare-task_type", "compare-language", "compare-context_bucket"):
        # Inside the scroll container like every other table, so phones scroll it.
        assert f'tabindex="0">\n<table class="board" id="{table}">' in html
    assert '<th scope="row">C++</th>' in html and '<th scope="row">Data/ML</th>' in html
    assert "Under 1k tokens" in html
    assert "1 more value with fewer than 10 battles." in html
    assert "haskell" not in html.lower()
    assert "not both on this value's board" in html


def test_per_slice_counts_agree_with_the_slice_boards(simulated, settings):
    """Against the recompute's own aggregation: where both models are on a value's board,
    the head-to-head battles are that board's battle count for the pair."""
    settings.ARENA_COMPARE_MIN_VOTES = 10
    recompute(trigger="test")
    a, b = "deepseek-coder-fim", "codestral-2405"
    checked = 0
    for d in compare_slices.per_slice(a=a, b=b):
        for v in d["values"]:
            board = selectors.board(category=v["category"])
            keys = [m["model"] for m in board["models"]] if board else []
            if a in keys and b in keys:
                i, j = keys.index(a), keys.index(b)
                assert v["battles"] == board["matrices"]["battle_count"][i][j]
                assert v["observed"] == pytest.approx(
                    board["matrices"]["win_fraction"][i][j], abs=1e-4
                )
                assert v["predicted"] == pytest.approx(
                    board["matrices"]["predicted_win_rate"][i][j], abs=1e-4
                )
                checked += 1
    assert checked >= 3
