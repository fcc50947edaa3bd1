"""import_external_scores on the real public files, on crafted CodeArena files, and on broken
copies (a clear error naming the file and place, and nothing imported)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime

import pytest
from django.core.management.base import CommandError

from external import services
from external.models import ExternalBoard, ExternalScore, Match
from external.services import import_demo_scores, import_scores
from external.sources import DEMO_IMPORTS, DemoImport

from .conftest import BENCH, run


def board(source: str, metric: str) -> ExternalBoard:
    return ExternalBoard.objects.get(source__key=source, metric=metric)


def score(source: str, metric: str, name: str) -> ExternalScore:
    return ExternalScore.objects.get(board__source__key=source, board__metric=metric, name=name)


# ------------------------------------------------------------------------- real files


def test_livebench_table_and_categories(aliases):
    out = run("import_external_scores", "livebench", str(BENCH / "livebench/table_2024_08_31.csv"))
    overall, coding = board("livebench", "overall"), board("livebench", "coding")
    assert overall.release == coding.release == "2024-08-31"
    assert overall.scores.count() == coding.scores.count() == 59
    # SOURCES.md's worked example: (60.256 + 74.0) / 2.
    assert score("livebench", "coding", "claude-3-5-sonnet-20241022").value == pytest.approx(
        67.128, abs=1e-3
    )
    llama = score("livebench", "coding", "meta-llama-3.1-405b-instruct-turbo")
    assert llama.model.key == "llama-3.1-405b-instruct" and llama.match == Match.ALIAS
    assert coding.scores.filter(model__isnull=False).count() == 11
    assert "LiveBench coding (2024-08-31): 59 score(s)" in out
    assert "11 matched, 0 deliberately unmatched, 48 unmatched" in out
    assert "unmatched: chatgpt-4o-latest-0903, claude-3-5-haiku-20241022" in out
    assert overall.file_name == "table_2024_08_31.csv, categories_2024_08_31.json"
    assert len(overall.file_sha256) == 64


def test_livebench_2026_release_has_none_of_the_demo_models(aliases):
    out = run(
        "import_external_scores",
        "livebench",
        str(BENCH / "livebench/table_2026_01_08.csv"),
        str(BENCH / "livebench/categories_2026_01_08.json"),
    )
    coding = board("livebench", "coding")
    assert coding.release == "2026-01-08"
    assert coding.scores.count() == 127
    assert not coding.scores.filter(model__isnull=False).exists()
    assert "0 matched" in out


def test_bigcodebench_full_and_hard(aliases):
    run("import_external_scores", "bigcodebench", str(BENCH / "bigcodebench/results.json"))
    run("import_external_scores", "bigcodebench", str(BENCH / "bigcodebench/results-hard.json"))
    counts = {
        b.metric: b.scores.count() for b in ExternalBoard.objects.filter(source__key="bigcodebench")
    }
    assert counts == {
        "complete": 153,
        "instruct": 126,
        "average": 123,
        "hard_complete": 199,
        "hard_instruct": 173,
        "hard_average": 170,
    }
    # GPT-4o (Aug) and DeepSeek-V2.5 are null in the full set: scored in Hard only.
    assert not ExternalScore.objects.filter(board__metric="complete", name="DeepSeek-V2.5").exists()
    hard = score("bigcodebench", "hard_complete", "DeepSeek-V2.5")
    assert hard.value == 29.1 and hard.model.key == "deepseek-coder-fim"
    assert score("bigcodebench", "hard_average", "DeepSeek-V2.5").value == pytest.approx(26.05)
    assert board("bigcodebench", "hard_complete").details == {"subset": "hard"}


def test_livecodebench_window(aliases):
    path = BENCH / "livecodebench/performances_generation.json"
    out = run("import_external_scores", "livecodebench", str(path), "--start", "2024-08-01")
    b = board("livecodebench", "pass@1")
    assert b.release == "problems 2024-08-01 to last"
    assert b.details == {"window_start": "2024-08-01", "window_end": None}
    assert b.scores.count() == 19
    # Recompute one model's mean by hand from the file.
    data = json.loads(path.read_text())
    cut = datetime(2024, 8, 1, tzinfo=UTC).timestamp() * 1000
    mine = [
        p["pass@1"]
        for p in data["performances"]
        if p["model"] == "GPT-4O-mini-2024-07-18" and p["date"] >= cut
    ]
    row = score("livecodebench", "pass@1", "GPT-4O-mini-2024-07-18")
    assert row.value == pytest.approx(sum(mine) / len(mine))
    assert row.extra["n_problems"] == len(mine) == 279
    assert row.model.key == "gpt-4o-mini-2024-07-18"
    # codestral-latest is a moving alias: deliberately not matched by default.
    assert score("livecodebench", "pass@1", "Codestral-Latest").match == Match.IGNORED
    assert "6 matched, 2 deliberately unmatched, 11 unmatched" in out
    # A second window is a second board, the first one stays.
    run("import_external_scores", "livecodebench", str(path), "--end", "2024-08-01")
    assert ExternalBoard.objects.filter(source__key="livecodebench").count() == 2


def test_chatbot_arena_three_releases(aliases):
    for name, n in (
        ("lmsys_2024_12_31.csv", 182),
        ("lmsys_2025_07_18.csv", 218),
        ("lmarena_text_2025_08_04.csv", 265),
    ):
        run("import_external_scores", "chatbot_arena", str(BENCH / "chatbot-arena" / name))
        release = name.rsplit("_", 3)[-3:]
        b = ExternalBoard.objects.get(
            source__key="chatbot_arena", release="-".join(release).removesuffix(".csv")
        )
        assert b.scores.count() == n
    first = ExternalBoard.objects.get(source__key="chatbot_arena", release="2024-12-31")
    bf16 = first.scores.get(name="Meta-Llama-3.1-405B-Instruct-bf16")
    fp8 = first.scores.get(name="Meta-Llama-3.1-405B-Instruct-fp8")
    assert bf16.value == 1266 and bf16.model.key == "llama-3.1-405b-instruct"
    assert fp8.model is None and fp8.match == Match.IGNORED
    deepseek = first.scores.get(name="Deepseek-v2.5")
    assert deepseek.value == 1258 and deepseek.extra["votes"] == 26493
    assert deepseek.extra["ci_lower"] == 1253 and deepseek.extra["ci_upper"] == 1262
    assert first.label == "Chatbot Arena overall arena score (2024-12-31)"


def test_evalplus(aliases):
    run("import_external_scores", "evalplus", str(BENCH / "evalplus/results.json"))
    assert board("evalplus", "humaneval+").scores.count() == 125
    assert board("evalplus", "mbpp+").scores.count() == 89
    codestral = score("evalplus", "humaneval+", "Codestral-22B-v0.1")
    assert codestral.value == 73.8 and codestral.model.key == "codestral-2405"


def test_reimport_replaces_and_keeps_the_admins_choice(aliases):
    path = str(BENCH / "evalplus/results.json")
    run("import_external_scores", "evalplus", path)
    b = board("evalplus", "mbpp")
    b.active = False
    b.save()
    out = run("import_external_scores", "evalplus", path)
    assert "(replacing the earlier import)" in out
    assert ExternalBoard.objects.filter(source__key="evalplus").count() == 4
    assert ExternalScore.objects.filter(board__source__key="evalplus").count() == 428
    assert not board("evalplus", "mbpp").active


def test_demo_import_covers_every_source(aliases):
    report = import_demo_scores()
    labels = [b.label for b in report.boards]
    assert len(labels) == 14
    assert "Chatbot Arena overall arena score (2024-12-31)" in labels
    assert "LiveCodeBench code generation pass@1 (problems 2024-08-01 to last)" in labels


# ------------------------------------------------------------------- CodeArena-style


def test_codearena_csv(tmp_path, aliases):
    path = tmp_path / "codearena.csv"
    path.write_text(
        "model,win_rate,tie_rate,n,baseline,category\n"
        "gpt-4o-2024-08-06,0.62,0.05,397,gpt-4-turbo-2024-04-09,\n"
        "gpt-4o-2024-08-06,0.70,0.02,50,gpt-4-turbo-2024-04-09,UI/UX\n"
        "Some Other Model,0.31,,397,gpt-4-turbo-2024-04-09,overall\n"
    )
    out = run("import_external_scores", "codearena", str(path))
    b = board("codearena", "win_rate")
    assert b.release == "gpt-4-turbo-2024-04-09"
    gpt = b.scores.get(name="gpt-4o-2024-08-06")
    assert gpt.value == 0.62 and gpt.model.key == "gpt-4o-2024-08-06" and gpt.match == Match.KEY
    assert gpt.extra["per_category"] == {"UI/UX": {"win_rate": 0.7, "tie_rate": 0.02, "n": 50}}
    assert gpt.extra["n"] == 397
    assert "unmatched: Some Other Model" in out


def test_codearena_json_forms(tmp_path, aliases):
    path = tmp_path / "rates.json"
    path.write_text(
        json.dumps(
            {
                "baseline": "gpt-4-turbo-2024-04-09",
                "judge": "gpt-4o",
                "models": {
                    "codestral-2405": {
                        "win_rate": 0.4,
                        "n": 10,
                        "per_category": {"x": {"win_rate": 1}},
                    },
                    "gemini-1.5-pro-002": {"win_rate": 0.55},
                },
            }
        )
    )
    run("import_external_scores", "codearena", str(path), "--release", "v1")
    b = ExternalBoard.objects.get(source__key="codearena", release="v1")
    assert sorted(b.scores.values_list("name", "value")) == [
        ("codestral-2405", 0.4),
        ("gemini-1.5-pro-002", 0.55),
    ]
    assert b.details == {"baseline": "gpt-4-turbo-2024-04-09", "judge": "gpt-4o"}
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([{"model": "a", "win_rate": 0.5}, {"model": "b", "win_rate": 0}]))
    run("import_external_scores", "codearena", str(listed), "--release", "v2")
    assert ExternalBoard.objects.get(release="v2").scores.count() == 2


def test_codearena_judgments_scored_with_swapped_games(tmp_path, aliases):
    # Game 1: baseline is A, model is B; game 2 swapped (reference section 7).
    lines = [
        {
            "model": "m",
            "question_id": "q1",
            "category": "c1",
            "game1": "... [[B>A]]",
            "game2": "[[A>B]]",
        },
        {
            "model": "m",
            "question_id": "q2",
            "category": "c1",
            "game1": "[[A>>B]]",
            "game2": "[[B>A]]",
        },
        {
            "model": "m",
            "question_id": "q3",
            "category": "c2",
            "game1": "[[B>>A]]",
            "game2": "[[B>A]]",
        },
        {"model": "m", "question_id": "q4", "game1": "no verdict", "game2": None},
    ]
    path = tmp_path / "judgments.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    run("import_external_scores", "codearena", str(path))
    row = score("codearena", "win_rate", "m")
    # Games won of two: q1 both (1), q2 none (0), q3 the strong one only (0.5; the summed
    # rule called it a win), q4 none (no verdicts: 0, not a tie). (1 + 0 + 0.5 + 0) / 4.
    assert row.value == 0.375
    assert row.extra["tie_rate"] == 0.0 and row.extra["n"] == 4
    assert row.extra["per_category"]["c1"] == {"win_rate": 0.5, "tie_rate": 0.0, "n": 2}


# ------------------------------------------------------------------------ broken files


def _import_error(*args: str) -> str:
    with pytest.raises(CommandError) as info:
        run("import_external_scores", *args)
    return str(info.value)


@pytest.mark.parametrize(
    ("fmt", "source", "break_it", "expected"),
    [
        (
            "bigcodebench",
            "bigcodebench/results.json",
            lambda text: text[: len(text) // 2],
            "invalid JSON at line",
        ),
        (
            "evalplus",
            "evalplus/results.json",
            lambda text: text.replace('"humaneval+": 73.8', '"humaneval+": 738', 1),
            "Codestral-22B-v0.1.pass@1.humaneval+): score 738.0 outside [0, 100]",
        ),
        (
            "chatbot_arena",
            "chatbot-arena/lmsys_2024_12_31.csv",
            lambda text: text.replace("arena_score", "score", 1),
            "(header): missing column(s) ['arena_score']",
        ),
        (
            "chatbot_arena",
            "chatbot-arena/lmsys_2024_12_31.csv",
            lambda text: text.replace("Deepseek-v2.5,1258", "Deepseek-v2.5,high", 1),
            "(line 35, arena_score): expected a number, got 'high'",
        ),
        (
            "livecodebench",
            "livecodebench/performances_generation.json",
            lambda text: text.replace('"performances"', '"perf"', 1),
            "missing list 'performances'",
        ),
    ],
)
def test_broken_copy_is_a_clear_error_and_imports_nothing(
    tmp_path, aliases, fmt, source, break_it, expected
):
    # Something already imported must survive a failed import untouched.
    run("import_external_scores", "evalplus", str(BENCH / "evalplus/results.json"))
    before = sorted(ExternalScore.objects.values_list("board_id", "name", "value"))
    boards_before = ExternalBoard.objects.count()
    original = BENCH / source
    broken = tmp_path / original.name
    broken.write_text(break_it(original.read_text(encoding="utf-8")), encoding="utf-8")
    message = _import_error(fmt, str(broken))
    assert message.startswith("Nothing imported. ")
    assert str(broken) in message
    assert expected in message
    assert sorted(ExternalScore.objects.values_list("board_id", "name", "value")) == before
    assert ExternalBoard.objects.count() == boards_before


def test_broken_livebench_row(tmp_path, aliases):
    for name in ("table_2024_08_31.csv", "categories_2024_08_31.json"):
        shutil.copy(BENCH / "livebench" / name, tmp_path / name)
    table = tmp_path / "table_2024_08_31.csv"
    lines = table.read_text().splitlines()
    cells = lines[5].split(",")
    cells[3] = "n/a"
    lines[5] = ",".join(cells)
    table.write_text("\n".join(lines) + "\n")
    message = _import_error("livebench", str(table))
    assert "(line 6, " in message and "expected a number, got 'n/a'" in message
    assert not ExternalBoard.objects.exists()


def test_codearena_errors_are_clear(tmp_path, aliases):
    path = tmp_path / "percent.csv"
    path.write_text("model,win_rate\na,61.5\n")
    assert "(line 2, win_rate): rate must be a fraction in [0, 1], got 61.5 (a percentage?" in (
        _import_error("codearena", str(path))
    )
    path.write_text("model,win_rate\na,0.5\na,0.6\n")
    assert "(line 3): duplicate model 'a'" in _import_error("codearena", str(path))
    path.write_text("name,rate\na,0.5\n")
    assert "missing column(s) ['model', 'win_rate']" in _import_error("codearena", str(path))
    jl = tmp_path / "j.jsonl"
    jl.write_text('{"model": "m", "question_id": "q", "game1": "[[A>B]]"}\n')
    assert "(line 1): missing key(s) ['game2']" in _import_error("codearena", str(jl))
    other = tmp_path / "rates.txt"
    other.write_text("x")
    assert "must be .csv, .json or .jsonl" in _import_error("codearena", str(other))
    assert not ExternalBoard.objects.exists()


def test_usage_errors(aliases):
    assert "no such file" in _import_error("evalplus", "/nonexistent/results.json")
    assert "is a directory, not a file" in _import_error("evalplus", str(BENCH))
    assert "only apply to livecodebench" in _import_error(
        "evalplus", str(BENCH / "evalplus/results.json"), "--start", "2024-01-01"
    )
    assert "not a date" in _import_error(
        "livecodebench",
        str(BENCH / "livecodebench/performances_generation.json"),
        "--start",
        "soon",
    )
    assert "give a format" in _import_error()


def test_demo_import_is_all_or_nothing(monkeypatch, tmp_path, aliases):
    broken = tmp_path / "results.json"
    broken.write_text("{")
    monkeypatch.setattr(
        services,
        "DEMO_IMPORTS",
        (*DEMO_IMPORTS, DemoImport("evalplus", (str(broken),))),
    )
    message = _import_error("--demo")
    assert "invalid JSON" in message
    assert not ExternalBoard.objects.exists() and not ExternalScore.objects.exists()


def test_a_failure_while_writing_rolls_everything_back(monkeypatch, aliases):
    run("import_external_scores", "evalplus", str(BENCH / "evalplus/results.json"))
    before = ExternalScore.objects.count()

    def fail(**kwargs):
        raise RuntimeError("database went away")

    monkeypatch.setattr(services, "resolve_scores", fail)
    with pytest.raises(RuntimeError):
        import_scores(fmt="bigcodebench", paths=[BENCH / "bigcodebench/results.json"])
    assert not ExternalBoard.objects.filter(source__key="bigcodebench").exists()
    assert ExternalScore.objects.count() == before
