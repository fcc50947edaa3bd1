"""Question sets for the CodeArena judge: CodeArena's JSON-lines layout, and the taxonomy.

CodeArena (Yang et al. 2024, ``CSJianYang/CodeArena``; evaluation code in
``QwenLM/Qwen2.5-Coder``, ``qwencoder-eval/instruct/CodeArena``) ships one JSON object per line:
``id``, ``messages`` (the conversation; the question is its first user message),
``gpt-4-turbo-2024-04-09_response`` (the baseline's answer), ``difficulty``,
``programming_language`` (a list) and, in the judged files, ``meta.parsed.task_type`` (a
list of free-text task types). Their scorer maps the first task type, lower-cased with ``-``
read as a space, through ``utils/tasktype_to_levels.json`` to ``[level-1, level-2]``
categories and reports win rates per level-1 category.

`load_questions` reads that layout and a flatter one, field by field, first match wins:

| field | read from |
|---|---|
| question id | ``id``, ``question_id``; else the line number |
| question | ``question``; else the first ``user`` message of ``messages`` (a list, or JSON text) |
| subtask | ``subtask``, ``task_type``, ``meta.parsed.task_type`` (first if a list) |
| category | ``category``; else the level-1 category of the subtask in the taxonomy, if given |
| language | ``language``, ``programming_language`` (first if a list) |
| baseline answer | ``baseline_answer``, the ``baseline_key`` column (default CodeArena's) |

The taxonomy file is not shipped with the project (its repository states no licence); pass
the path of a copy (``load_taxonomy``). ``arena_site/data/evaluations/codearena-example.jsonl`` is a small
set written for this project in CodeArena's layout, with an explicit ``category``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXAMPLE_SET = (
    Path(__file__).resolve().parent.parent
    / "arena_site"
    / "data"
    / "evaluations"
    / "codearena-example.jsonl"
)
CODEARENA_BASELINE_KEY = "gpt-4-turbo-2024-04-09_response"


@dataclass(frozen=True)
class JudgeQuestion:
    question_id: str
    question: str
    category: str | None = None
    subtask: str | None = None
    language: str | None = None
    difficulty: str | None = None
    baseline_answer: str | None = None


def normalise_task_type(label: str) -> str:
    """CodeArena's key for a task type: lower case, ``-`` read as a space."""
    return label.replace("-", " ").strip().lower()


def load_taxonomy(path: str | Path) -> dict[str, tuple[str, str]]:
    """``tasktype_to_levels.json``: task type -> its first ``(level-1, level-2)`` pair."""
    with open(path, encoding="utf-8") as handle:
        raw = json.load(handle)
    table: dict[str, tuple[str, str]] = {}
    for label, levels in raw.items():
        if levels and len(levels[0]) == 2:
            table[normalise_task_type(label)] = (str(levels[0][0]), str(levels[0][1]))
    return table


def _first(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _question(row: Mapping[str, Any], where: str) -> str:
    if isinstance(row.get("question"), str) and row["question"].strip():
        return str(row["question"])
    messages = row.get("messages")
    if isinstance(messages, str):
        try:
            messages = json.loads(messages)
        except ValueError:
            raise ValueError(f"{where}: 'messages' is text but not JSON") from None
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, Mapping) and message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str) and content.strip():
                    return content
    raise ValueError(f"{where}: no 'question' and no user message in 'messages'")


def _subtask(row: Mapping[str, Any]) -> str | None:
    for key in ("subtask", "task_type"):
        if row.get(key):
            return _first(row[key])
    meta = row.get("meta")
    if isinstance(meta, Mapping) and isinstance(meta.get("parsed"), Mapping):
        return _first(meta["parsed"].get("task_type"))
    return None


def parse_question(
    row: Mapping[str, Any],
    *,
    line: int,
    taxonomy: Mapping[str, tuple[str, str]] | None = None,
    baseline_key: str = CODEARENA_BASELINE_KEY,
) -> JudgeQuestion:
    where = f"line {line}"
    question_id = _first(row.get("id", row.get("question_id"))) or f"line-{line}"
    subtask = _subtask(row)
    category = _first(row.get("category"))
    if category is None and subtask is not None and taxonomy is not None:
        levels = taxonomy.get(normalise_task_type(subtask))
        category = levels[0] if levels else None
    baseline = row.get("baseline_answer", row.get(baseline_key))
    return JudgeQuestion(
        question_id=question_id,
        question=_question(row, where),
        category=category,
        subtask=subtask,
        language=_first(row.get("language", row.get("programming_language"))),
        difficulty=_first(row.get("difficulty")),
        baseline_answer=baseline if isinstance(baseline, str) and baseline.strip() else None,
    )


def load_questions(
    path: str | Path = EXAMPLE_SET,
    *,
    taxonomy: Mapping[str, tuple[str, str]] | str | Path | None = None,
    baseline_key: str = CODEARENA_BASELINE_KEY,
) -> list[JudgeQuestion]:
    """Every question of a JSON-lines file; raises ``ValueError`` naming the bad line."""
    table = load_taxonomy(taxonomy) if isinstance(taxonomy, str | Path) else taxonomy
    questions: list[JudgeQuestion] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except ValueError:
                raise ValueError(f"line {number}: not JSON") from None
            if not isinstance(row, Mapping):
                raise ValueError(f"line {number}: not a JSON object")
            question = parse_question(row, line=number, taxonomy=table, baseline_key=baseline_key)
            if question.question_id in seen:
                raise ValueError(f"line {number}: duplicate id {question.question_id!r}")
            seen.add(question.question_id)
            questions.append(question)
    return questions
