"""Tests for external.benchmark_formats on the real score files in arena_site/data/benchmarks/ and on
broken copies of them."""

from __future__ import annotations

import io
import json
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from external.benchmark_formats import (
    BenchmarkFormatError,
    ExternalScoreRow,
    parse_bigcodebench,
    parse_chatbot_arena,
    parse_evalplus,
    parse_livebench,
    parse_livecodebench,
)

DATA = Path(__file__).parents[2] / "arena_site" / "data" / "benchmarks"
LB_TABLE_2024 = DATA / "livebench" / "table_2024_08_31.csv"
LB_CATS_2024 = DATA / "livebench" / "categories_2024_08_31.json"
LB_TABLE_2026 = DATA / "livebench" / "table_2026_01_08.csv"
LB_CATS_2026 = DATA / "livebench" / "categories_2026_01_08.json"
BCB_FULL = DATA / "bigcodebench" / "results.json"
BCB_HARD = DATA / "bigcodebench" / "results-hard.json"
LCB = DATA / "livecodebench" / "performances_generation.json"
ARENA_2024 = DATA / "chatbot-arena" / "lmsys_2024_12_31.csv"
ARENA_2025 = DATA / "chatbot-arena" / "lmsys_2025_07_18.csv"
ARENA_TEXT = DATA / "chatbot-arena" / "lmarena_text_2025_08_04.csv"
EVALPLUS = DATA / "evalplus" / "results.json"


def by_key(rows: list[ExternalScoreRow]) -> dict[tuple[str, str], ExternalScoreRow]:
    index = {(row.model_name, row.metric): row for row in rows}
    assert len(index) == len(rows), "a (model, metric) pair appears twice"
    return index


def broken_copy(tmp_path: Path, original: Path, edit) -> Path:
    """A copy of ``original`` with ``edit(text) -> text`` applied (same file name)."""
    target = tmp_path / original.name
    text = original.read_text(encoding="utf-8")
    changed = edit(text)
    assert changed != text, "the edit did not change anything"
    target.write_text(changed, encoding="utf-8")
    return target


def test_copies_come_with_their_sources_file():
    sources = (DATA / "SOURCES.md").read_text(encoding="utf-8")
    for path in (LB_TABLE_2024, BCB_FULL, LCB, ARENA_TEXT, EVALPLUS):
        assert path.exists()
        assert path.relative_to(DATA).as_posix() in sources


# ---------------------------------------------------------------------- LiveBench


def test_livebench_2024_known_values():
    rows = parse_livebench(LB_TABLE_2024, LB_CATS_2024)
    index = by_key(rows)
    assert len({row.model_name for row in rows}) == 59
    assert len(rows) == 2 * 59  # every model has every task: overall and coding each
    coding = index[("claude-3-5-sonnet-20241022", "coding")]
    # SOURCES.md: (60.256 + 74.0) / 2 = 67.13
    assert round(coding.value, 2) == 67.13
    assert coding.extra["release"] == "2024-08-31"
    assert coding.extra["tasks"] == {"LCB_generation": 60.256, "coding_completion": 74.0}
    overall = index[("claude-3-5-sonnet-20241022", "overall")]
    # Category means: Reasoning 58.667, Coding 67.128, Mathematics 51.279,
    # Data Analysis 52.780, Language 58.093, IF 74.054 -> mean 60.334
    assert overall.value == pytest.approx(60.3336, abs=1e-3)
    assert overall.extra["categories"]["Coding"] == pytest.approx(67.128)
    assert {row.source for row in rows} == {"livebench"}


def test_livebench_2026_short_row_and_no_target_models():
    rows = parse_livebench(LB_TABLE_2026, LB_CATS_2026)
    index = by_key(rows)
    assert len({row.model_name for row in rows}) == 127
    # The one row with 3 missing trailing cells still gets its scores.
    short = index[("nemotron-3-super-120b-a12b", "overall")]
    assert sorted(short.extra["missing_tasks"]) == ["typescript", "typos", "zebra_puzzle"]
    coding = index[("nemotron-3-super-120b-a12b", "coding")]
    assert coding.value == pytest.approx((69.014 + 39.13) / 2)
    assert set(short.extra["categories"]) >= {"Coding", "Agentic Coding"}
    # SOURCES.md: none of the Copilot Arena models is in this release.
    targets = {"gpt-4o-2024-08-06", "claude-3-5-sonnet-20241022", "gemini-1.5-pro-002",
               "qwen2.5-coder-32b-instruct", "deepseek-v2.5"}  # fmt: skip
    assert not targets & {row.model_name for row in rows}


def test_livebench_accepts_file_objects():
    from_paths = parse_livebench(LB_TABLE_2024, LB_CATS_2024)
    with LB_TABLE_2024.open("rb") as table, LB_CATS_2024.open(encoding="utf-8") as cats:
        from_files = parse_livebench(table, cats)
    assert from_files == from_paths


@pytest.mark.parametrize(
    ("which", "edit", "message"),
    [
        ("table", lambda t: t.replace("LCB_generation", "LCB_gen", 1), "missing column"),
        ("table", lambda t: t.replace("60.256", "sixty", 1), "expected a number"),
        ("table", lambda t: t.replace("60.256", "160.256", 1), "outside"),
        ("table", lambda t: t.replace("60.256", "nan", 1), "not finite"),
        (
            "table",
            lambda t: t.replace("\nclaude-3-haiku-20240307,", "\nclaude-3-5-haiku-20241022,", 1),
            "duplicate model",
        ),
        ("table", lambda t: t.replace("50.0\n", "50.0,1.0\n", 1), "cells but the header"),
        ("table", lambda t: t[:0], "empty file"),
        ("categories", lambda t: t[: len(t) // 2], "invalid JSON"),
        ("categories", lambda t: t.replace('"Coding"', '"Programming"'), "no 'Coding'"),
        ("categories", lambda t: t.replace('"spatial"\n', "7\n", 1), "list of task names"),
    ],
)
def test_livebench_broken_files(tmp_path, which, edit, message):
    table, cats = LB_TABLE_2024, LB_CATS_2024
    if which == "table":
        table = broken_copy(tmp_path, table, edit)
    else:
        cats = broken_copy(tmp_path, cats, edit)
    with pytest.raises(BenchmarkFormatError, match=message) as info:
        parse_livebench(table, cats)
    assert info.value.file.endswith((table.name, cats.name))


# ------------------------------------------------------------------- BigCodeBench


def test_bigcodebench_full_and_hard():
    full = by_key(parse_bigcodebench(BCB_FULL))
    hard = by_key(parse_bigcodebench(BCB_HARD))
    # SOURCES.md: GPT-4o-2024-08-06 is null in the full set and scored only in Hard.
    assert not any(model == "GPT-4o-2024-08-06" for model, _ in full)
    assert hard[("GPT-4o-2024-08-06", "hard_complete")].value == 36.5
    assert hard[("GPT-4o-2024-08-06", "hard_instruct")].value == 25.0
    assert hard[("GPT-4o-2024-08-06", "hard_average")].value == pytest.approx(30.75)
    assert hard[("GPT-4o-2024-08-06", "hard_average")].extra["subset"] == "hard"
    magicoder = "Magicoder-S-DS-6.7B"
    assert full[(magicoder, "complete")].value == 47.6
    assert full[(magicoder, "instruct")].value == 36.2
    assert full[(magicoder, "average")].value == pytest.approx(41.9)
    assert full[(magicoder, "average")].extra["subset"] == "full"
    # 202 models in each file; the per-metric counts follow the nulls (153 and 126 scored).
    metrics = Counter(metric for _, metric in full)
    assert metrics["complete"] == 153 and metrics["instruct"] == 126
    assert metrics["average"] <= 126
    assert len({model for model, _ in hard}) <= 202


def test_bigcodebench_null_half_means_no_average(tmp_path):
    data = {"M": {"pass@1": {"complete": 50.0, "instruct": None}, "link": "x"}}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    rows = parse_bigcodebench(path)
    assert [(r.metric, r.value) for r in rows] == [("complete", 50.0)]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t[: len(t) - 200], "invalid JSON"),
        (lambda t: t.replace('"complete": 47.6', '"complete": "47.6%"', 1), "expected a number"),
        (lambda t: t.replace('"instruct": 36.2,\n', "", 1), "missing 'instruct'"),
        (lambda t: t.replace('"pass@1"', '"pass_at_1"', 1), "expected an object"),
        (lambda t: t.replace('"complete": 47.6', '"complete": NaN', 1), "invalid JSON"),
    ],
)
def test_bigcodebench_broken_files(tmp_path, edit, message):
    with pytest.raises(BenchmarkFormatError, match=message):
        parse_bigcodebench(broken_copy(tmp_path, BCB_FULL, edit))


# ------------------------------------------------------------------ LiveCodeBench


def test_livecodebench_whole_file():
    rows = parse_livecodebench(LCB)
    assert len(rows) == 19
    assert all(row.extra["n_problems"] == 880 for row in rows)
    gpt4o = next(row for row in rows if row.model_name == "GPT-4O-2024-08-06")
    assert gpt4o.extra["model_id"] == "gpt-4o-2024-08-06"
    assert set(gpt4o.extra["by_difficulty"]) == {"easy", "medium", "hard"}
    assert 0 < gpt4o.value < 100


def test_livecodebench_window_matches_a_direct_computation():
    start, end = date(2024, 8, 1), date(2025, 2, 1)
    rows = by_key(parse_livecodebench(LCB, start=start, end=end))
    raw = json.loads(LCB.read_text())
    lo = int(datetime(2024, 8, 1, tzinfo=UTC).timestamp() * 1000)
    hi = int(datetime(2025, 2, 1, tzinfo=UTC).timestamp() * 1000)
    for model in ("Claude-3.5-Sonnet-20241022", "GPT-4O-mini-2024-07-18", "Codestral-Latest"):
        scores = [p["pass@1"] for p in raw["performances"]
                  if p["model"] == model and lo <= p["date"] < hi]  # fmt: skip
        row = rows[(model, "pass@1")]
        assert row.extra["n_problems"] == len(scores) > 0
        assert row.value == pytest.approx(sum(scores) / len(scores))
        assert row.extra["window_start"].startswith("2024-08-01")
    # Same window given as epoch milliseconds.
    assert by_key(parse_livecodebench(LCB, start=lo, end=hi)) == rows


def test_livecodebench_empty_window_and_bad_window():
    assert parse_livecodebench(LCB, start=date(2030, 1, 1)) == []
    with pytest.raises(ValueError):
        parse_livecodebench(LCB, start=date(2024, 2, 1), end=date(2024, 1, 1))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t[: len(t) // 3], "invalid JSON"),
        (lambda t: t.replace('"pass@1": 100.0', '"pass@1": "n/a"', 1), "expected a number"),
        (lambda t: t.replace('"model": "DeepSeek-V3"', '"model": "Nobody"', 1), "not in 'models'"),
        (lambda t: t.replace('"performances"', '"perfs"', 1), "missing list 'performances'"),
    ],
)
def test_livecodebench_broken_files(tmp_path, edit, message):
    with pytest.raises(BenchmarkFormatError, match=message):
        parse_livecodebench(broken_copy(tmp_path, LCB, edit))


# ------------------------------------------------------------------ Chatbot Arena


def test_chatbot_arena_lmsys_2024():
    rows = by_key(parse_chatbot_arena(ARENA_2024))
    assert len(rows) == 182
    sonnet = rows[("Claude 3.5 Sonnet (20241022)", "arena_score")]
    assert sonnet.value == 1283.0
    assert sonnet.extra["ci_plus"] == 4.0 and sonnet.extra["ci_minus"] == 3.0
    assert (sonnet.extra["ci_lower"], sonnet.extra["ci_upper"]) == (1280.0, 1287.0)
    assert sonnet.extra["votes"] == 42796
    assert sonnet.extra["snapshot"] == "2024-12-31"
    # SOURCES.md: Llama 3.1 405B appears twice, as bf16 and fp8.
    assert ("Meta-Llama-3.1-405B-Instruct-bf16", "arena_score") in rows
    assert ("Meta-Llama-3.1-405B-Instruct-fp8", "arena_score") in rows


def test_chatbot_arena_later_files():
    assert len(parse_chatbot_arena(ARENA_2025)) == 218
    text_rows = parse_chatbot_arena(ARENA_TEXT)
    # 266 lines, Yi-34B-Chat listed twice identically (only the row-number rank differs).
    assert len(text_rows) == 265
    assert [r.model_name for r in text_rows].count("Yi-34B-Chat") == 1
    assert text_rows[0].extra["snapshot"] == "2025-08-04"


def test_chatbot_arena_accepts_text_stream():
    stream = io.StringIO(ARENA_2024.read_text(encoding="utf-8"))
    assert parse_chatbot_arena(stream) == [
        ExternalScoreRow(r.source, r.metric, r.model_name, r.value, {**r.extra, "file": "<stream>",
                                                                     "snapshot": None})
        for r in parse_chatbot_arena(ARENA_2024)
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace(",votes,", ",n_votes,", 1), "missing column"),
        (lambda t: t.replace(",1373,", ",high,", 1), "expected a number"),
        (lambda t: t.replace("+4/-5", "±5", 1), "95_pct_ci"),
        (lambda t: t.replace(",16361,", ",16k,", 1), "votes"),
        (lambda t: t + t.splitlines()[1].replace("1373", "1300") + "\n", "listed twice"),
    ],
)
def test_chatbot_arena_broken_files(tmp_path, edit, message):
    with pytest.raises(BenchmarkFormatError, match=message):
        parse_chatbot_arena(broken_copy(tmp_path, ARENA_2024, edit))


# ----------------------------------------------------------------------- EvalPlus


def test_evalplus_known_values_and_nulls():
    rows = parse_evalplus(EVALPLUS)
    index = by_key(rows)
    qwen = "Qwen2.5-Coder-32B-Instruct"
    assert [index[(qwen, m)].value for m in ("humaneval", "humaneval+", "mbpp", "mbpp+")] == [
        92.1,
        87.2,
        90.5,
        77.0,
    ]
    assert index[(qwen, "mbpp")].extra["size"] == 32
    assert len({row.model_name for row in rows}) == 125
    assert len(rows) == 4 * 125 - 72  # 72 null scores in the file give no row
    assert ("Codestral-22B-v0.1", "humaneval") in index


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t[:-10], "invalid JSON"),
        (lambda t: t.replace('"humaneval": 92.1', '"humaneval": "92.1%"', 1), "expected a number"),
        (lambda t: t.replace('"humaneval": 92.1', '"humaneval": -3', 1), "outside"),
        (lambda t: t.replace('"mbpp+": 77.0', '"mbpp_plus": 77.0', 1), "missing 'mbpp\\+'"),
    ],
)
def test_evalplus_broken_files(tmp_path, edit, message):
    with pytest.raises(BenchmarkFormatError, match=message) as info:
        parse_evalplus(broken_copy(tmp_path, EVALPLUS, edit))
    assert "results.json" in str(info.value)


def test_error_message_names_file_place_and_problem(tmp_path):
    path = broken_copy(tmp_path, EVALPLUS, lambda t: t.replace('"mbpp": 90.5', '"mbpp": "x"', 1))
    with pytest.raises(BenchmarkFormatError) as info:
        parse_evalplus(path)
    error = info.value
    assert error.file == str(path)
    assert error.where == "Qwen2.5-Coder-32B-Instruct.pass@1.mbpp"
    assert "expected a number" in error.problem
    assert str(error).startswith(str(path))


def test_unreadable_path_is_a_format_error(tmp_path):
    with pytest.raises(BenchmarkFormatError, match="cannot read"):
        parse_evalplus(tmp_path / "missing.json")
