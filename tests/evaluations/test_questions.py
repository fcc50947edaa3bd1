"""Question sets in CodeArena's layout and the flat one; the taxonomy; errors that name the line.

Pure (``-p no:django``). The CodeArena rows are shaped like the ones in the CodeArena
dataset card and judged files (``id``, ``messages``, ``meta.parsed.task_type``,
``programming_language``, the baseline's ``gpt-4-turbo-2024-04-09_response``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluations.questions import (
    EXAMPLE_SET,
    load_questions,
    load_taxonomy,
    normalise_task_type,
)

# The project's shared data folder sits beside the repository (not shipped with it).
SHARED_TAXONOMY = (
    Path(__file__).resolve().parents[3] / "shared/data/benchmarks/codearena/tasktype_to_levels.json"
)
TAXONOMY = {"data parsing": ("Databases and Data Handling", "File and Data Operations")}


def write(tmp_path: Path, rows: list) -> Path:
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_codearena_layout(tmp_path):
    row = {
        "id": "60670a8d",
        "messages": [{"role": "user", "content": "Parse this CSV, please."}],
        "gpt-4-turbo-2024-04-09_response": "Use the csv module.",
        "difficulty": "easy",
        "programming_language": ["Python", "SQL"],
        "meta": {"parsed": {"task_type": ["Data-Parsing", "other"]}},
    }
    (q,) = load_questions(write(tmp_path, [row]), taxonomy=TAXONOMY)
    assert q.question_id == "60670a8d"
    assert q.question == "Parse this CSV, please."
    assert q.subtask == "Data-Parsing"
    assert q.category == "Databases and Data Handling"  # via the normalised task type
    assert q.language == "Python"
    assert q.difficulty == "easy"
    assert q.baseline_answer == "Use the csv module."


def test_flat_layout_and_messages_as_json_text(tmp_path):
    rows = [
        {
            "question_id": "a",
            "question": "Why?",
            "category": "Misc",
            "subtask": "x",
            "language": "Go",
        },
        {
            "id": "b",
            "messages": json.dumps(
                [{"role": "system", "content": "s"}, {"role": "user", "content": "How?"}]
            ),
        },
    ]
    a, b = load_questions(write(tmp_path, rows))
    assert (a.question, a.category, a.subtask, a.language) == ("Why?", "Misc", "x", "Go")
    assert (b.question, b.category, b.baseline_answer) == ("How?", None, None)


def test_other_baseline_columns(tmp_path):
    row = {"id": "x", "question": "Q", "gpt-4o-2024-05-13_response": "other"}
    (q,) = load_questions(write(tmp_path, [row]), baseline_key="gpt-4o-2024-05-13_response")
    assert q.baseline_answer == "other"


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["{not json"], "line 1: not JSON"),
        ([{"id": "x"}], "line 1: no 'question'"),
        ([{"id": "x", "question": "a"}, {"id": "x", "question": "b"}], "line 2: duplicate id"),
        (["[1, 2]"], "line 1: not a JSON object"),
    ],
)
def test_bad_rows_name_their_line(tmp_path, rows, message):
    with pytest.raises(ValueError, match=message):
        load_questions(write(tmp_path, rows))


def test_the_example_set_is_in_codearena_layout_and_every_task_type_is_in_the_taxonomy():
    questions = load_questions(EXAMPLE_SET)
    assert len(questions) == 12
    assert all(q.category and q.subtask and q.question for q in questions)
    for line in EXAMPLE_SET.read_text().splitlines():
        row = json.loads(line)
        assert set(row) >= {"id", "messages", "meta", "programming_language", "difficulty"}
    if SHARED_TAXONOMY.exists():  # the taxonomy is not shipped; where it is, cross-check
        table = load_taxonomy(SHARED_TAXONOMY)
        for q in questions:
            assert table[normalise_task_type(q.subtask)][0] == q.category
