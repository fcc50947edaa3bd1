"""Parsers for public leaderboard score files, turned into flat ``ExternalScoreRow`` lists.

Each parser reads one real file format (copies and provenance in ``arena_site/data/benchmarks/``,
described in its SOURCES.md) and returns one row per (model, metric):

==================  =========================  ==================================================
parser              source / metrics           value
==================  =========================  ==================================================
parse_livebench     ``livebench``:             ``overall`` = mean of the category means (the
                    ``overall``, ``coding``    site's Global Average); ``coding`` = mean of the
                                               release's "Coding" tasks. A category mean is
                                               the mean of its non-empty task cells.
parse_bigcodebench  ``bigcodebench``:          calibrated greedy pass@1 (%); ``average`` =
                    ``complete``, ``instruct``, (complete + instruct) / 2. The Hard subset
                    ``average`` (full set) or   file gives the ``hard_*`` metrics.
                    ``hard_complete``, ...
parse_livecodebench ``livecodebench``:         mean per-problem pass@1 (%) over problems whose
                    ``pass@1``                 release date is in ``[start, end)``.
parse_chatbot_arena ``chatbot_arena``:         Bradley-Terry arena score; CI and votes in
                    ``arena_score``            ``extra``.
parse_evalplus      ``evalplus``: ``humaneval``, greedy pass@1 (%).
                    ``humaneval+``, ``mbpp``,
                    ``mbpp+``
==================  =========================  ==================================================

``model_name`` is the spelling the source uses (mapping to arena model keys is the
caller's job; SOURCES.md lists the aliases). ``extra`` holds what identifies the snapshot
(release, subset, window, file) and the source's other per-model fields.

Null scores (BigCodeBench and EvalPlus use ``null`` for "not evaluated") produce no row
for that metric, and no ``average`` when either half is null. Anything else that is not
as documented - unreadable or truncated JSON, a missing column or key, a non-numeric or
out-of-range score, a duplicate model with different scores - raises
``BenchmarkFormatError`` naming the file, the row or key, and the problem. A parser never
returns part of a broken file.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import IO, Any

Source = str | os.PathLike[str] | IO[str] | IO[bytes]
"""A path, or an open text/binary file object."""


@dataclass(frozen=True)
class ExternalScoreRow:
    """One score of one model on one metric of an external leaderboard."""

    source: str
    metric: str
    model_name: str
    value: float
    extra: dict[str, Any] = field(default_factory=dict)


class BenchmarkFormatError(ValueError):
    """A score file does not have the documented format."""

    def __init__(self, file: str, problem: str, *, where: str | None = None) -> None:
        self.file = file
        self.where = where
        self.problem = problem
        location = f" ({where})" if where else ""
        super().__init__(f"{file}{location}: {problem}")


# ------------------------------------------------------------------------ reading


def _name_of(source: Source) -> str:
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def _read_text(source: Source) -> tuple[str, str]:
    """(text, name) of a path or file object; bytes are decoded as UTF-8 (BOM allowed)."""
    name = _name_of(source)
    try:
        if isinstance(source, str | os.PathLike):
            raw: str | bytes = Path(source).read_bytes()
        else:
            raw = source.read()
    except OSError as exc:
        raise BenchmarkFormatError(name, f"cannot read file: {exc}") from exc
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise BenchmarkFormatError(name, f"not UTF-8 text: {exc}") from exc
    return raw, name


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not a valid score")


def _read_json(source: Source) -> tuple[Any, str]:
    text, name = _read_text(source)
    try:
        return json.loads(text, parse_constant=_reject_constant), name
    except json.JSONDecodeError as exc:
        raise BenchmarkFormatError(
            name, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    except ValueError as exc:  # NaN / Infinity literals
        raise BenchmarkFormatError(name, f"invalid JSON: {exc}") from exc


def _read_csv(source: Source, required: tuple[str, ...]) -> tuple[list[str], list[list[str]], str]:
    """Header and data rows; checks the required columns and that no row is too long."""
    text, name = _read_text(source)
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise BenchmarkFormatError(name, f"unreadable CSV: {exc}") from exc
    rows = [row for row in rows if row]  # a trailing newline gives an empty row
    if not rows:
        raise BenchmarkFormatError(name, "empty file")
    header = [column.strip() for column in rows[0]]
    missing = [column for column in required if column not in header]
    if missing:
        raise BenchmarkFormatError(name, f"missing column(s) {missing}", where="header")
    if len(set(header)) != len(header):
        raise BenchmarkFormatError(name, "duplicate column names", where="header")
    for number, row in enumerate(rows[1:], start=2):
        if len(row) > len(header):
            raise BenchmarkFormatError(
                name, f"{len(row)} cells but the header has {len(header)}", where=f"line {number}"
            )
    if len(rows) == 1:
        raise BenchmarkFormatError(name, "no data rows")
    return header, rows[1:], name


def _number(value: Any, *, file: str, where: str, low: float | None = None,
            high: float | None = None) -> float:  # fmt: skip
    """A finite number within [low, high]; strings are parsed (CSV cells)."""
    if isinstance(value, bool):
        raise BenchmarkFormatError(file, f"expected a number, got {value!r}", where=where)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise BenchmarkFormatError(
                file, f"expected a number, got {value!r}", where=where
            ) from None
    elif isinstance(value, int | float):
        number = float(value)
    else:
        raise BenchmarkFormatError(file, f"expected a number, got {value!r}", where=where)
    if not math.isfinite(number):
        raise BenchmarkFormatError(file, f"score is not finite: {value!r}", where=where)
    if (low is not None and number < low) or (high is not None and number > high):
        raise BenchmarkFormatError(file, f"score {number} outside [{low}, {high}]", where=where)
    return number


def _object(value: Any, *, file: str, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise BenchmarkFormatError(
            file, f"expected an object, got {type(value).__name__}", where=where
        )
    return value


def _pass_at_1(
    data: Any, name: str, metrics: Sequence[str]
) -> Iterator[tuple[str, Mapping[str, Any], dict[str, float | None]]]:
    """Each model of a ``{model: {"pass@1": {metric: score or null}, ...}}`` file: its name,
    its entry and the named metrics' scores in %, None where the file has null."""
    models = _object(data, file=name, where="top level")
    if not models:
        raise BenchmarkFormatError(name, "no models")
    for key, raw_entry in models.items():
        model = _model_name(key, file=name, where="top-level key")
        entry = _object(raw_entry, file=name, where=model)
        scores = _object(entry.get("pass@1"), file=name, where=f"{model}.pass@1")
        values: dict[str, float | None] = {}
        for metric in metrics:
            if metric not in scores:
                raise BenchmarkFormatError(name, f"missing {metric!r}", where=f"{model}.pass@1")
            raw = scores[metric]
            values[metric] = (
                None
                if raw is None
                else _number(raw, file=name, where=f"{model}.pass@1.{metric}", low=0, high=100)
            )
        yield model, entry, values


def _model_name(value: Any, *, file: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BenchmarkFormatError(file, f"missing or empty model name: {value!r}", where=where)
    return value.strip()


_DATE_IN_NAME = re.compile(r"(\d{4})_(\d{2})_(\d{2})")


def _date_from_name(name: str) -> str | None:
    match = _DATE_IN_NAME.search(Path(name).name)
    return "-".join(match.groups()) if match else None


# ---------------------------------------------------------------------- LiveBench


def parse_livebench(
    table: Source, categories: Source, *, release: str | None = None
) -> list[ExternalScoreRow]:
    """LiveBench ``table_<release>.csv`` + ``categories_<release>.json``.

    Per model: ``overall`` (mean of category means) and ``coding`` (mean of the
    "Coding" category's tasks). A category mean averages the non-empty task cells; rows
    shorter than the header (the 2026-01-08 table has one) have their trailing cells
    empty. A model with an entirely empty category gets no ``overall`` row, and no
    ``coding`` row if that category is Coding. ``release`` defaults to the date in the
    table's file name (``"2024-08-31"``).
    """
    category_data, categories_name = _read_json(categories)
    category_map = _object(category_data, file=categories_name, where="top level")
    if not category_map:
        raise BenchmarkFormatError(categories_name, "no categories")
    tasks_by_category: dict[str, list[str]] = {}
    for category, tasks in category_map.items():
        if (
            not isinstance(tasks, list)
            or not tasks
            or not all(isinstance(t, str) and t for t in tasks)
        ):
            raise BenchmarkFormatError(
                categories_name, "expected a non-empty list of task names", where=category
            )
        tasks_by_category[category] = tasks
    if "Coding" not in tasks_by_category:
        raise BenchmarkFormatError(categories_name, "no 'Coding' category")

    all_tasks = tuple(t for tasks in tasks_by_category.values() for t in tasks)
    header, rows, table_name = _read_csv(table, ("model", *all_tasks))
    release = release or _date_from_name(table_name)
    position = {column: i for i, column in enumerate(header)}

    out: list[ExternalScoreRow] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, start=2):
        where = f"line {number}"
        model = _model_name(row[position["model"]], file=table_name, where=where)
        if model in seen:
            raise BenchmarkFormatError(table_name, f"duplicate model {model!r}", where=where)
        seen.add(model)
        cells: dict[str, float | None] = {}
        for task in all_tasks:
            i = position[task]
            raw = row[i].strip() if i < len(row) else ""
            cells[task] = (
                _number(raw, file=table_name, where=f"{where}, {task}", low=0, high=100)
                if raw
                else None
            )
        means: dict[str, float | None] = {}
        for category, tasks in tasks_by_category.items():
            values = [cells[t] for t in tasks if cells[t] is not None]
            means[category] = sum(values) / len(values) if values else None  # type: ignore[arg-type]
        missing = [t for t in all_tasks if cells[t] is None]
        base = {"release": release}
        if all(mean is not None for mean in means.values()):
            overall = sum(means.values()) / len(means)  # type: ignore[arg-type]
            out.append(
                ExternalScoreRow(
                    "livebench",
                    "overall",
                    model,
                    overall,
                    {**base, "categories": means, "missing_tasks": list(missing)},
                )
            )
        if means["Coding"] is not None:
            coding_tasks = {t: cells[t] for t in tasks_by_category["Coding"]}
            out.append(
                ExternalScoreRow(
                    "livebench",
                    "coding",
                    model,
                    means["Coding"],
                    {**base, "tasks": coding_tasks, "missing_tasks": list(missing)},
                )
            )
    return out


# ------------------------------------------------------------------- BigCodeBench

_BIGCODEBENCH_FIELDS = ("link", "open-data", "prompted", "moe", "size", "act_param", "date",
                        "prefill")  # fmt: skip


def parse_bigcodebench(source: Source, *, subset: str | None = None) -> list[ExternalScoreRow]:
    """BigCodeBench ``results.json`` (``subset="full"``) or ``results-hard.json`` (``"hard"``).

    Metrics ``complete``, ``instruct`` and ``average`` (prefixed ``hard_`` for the Hard
    subset). ``subset`` defaults to "hard" when the file name contains "hard".
    """
    data, name = _read_json(source)
    subset = subset or ("hard" if "hard" in Path(name).name.lower() else "full")
    if subset not in ("full", "hard"):
        raise ValueError(f"subset must be 'full' or 'hard', got {subset!r}")
    prefix = "hard_" if subset == "hard" else ""
    out: list[ExternalScoreRow] = []
    for model, entry, values in _pass_at_1(data, name, ("complete", "instruct")):
        extra = {"subset": subset, **{k: entry.get(k) for k in _BIGCODEBENCH_FIELDS}}
        for metric, value in values.items():
            if value is not None:
                out.append(
                    ExternalScoreRow("bigcodebench", prefix + metric, model, value, dict(extra))
                )
        if values["complete"] is not None and values["instruct"] is not None:
            average = (values["complete"] + values["instruct"]) / 2
            out.append(
                ExternalScoreRow("bigcodebench", prefix + "average", model, average, dict(extra))
            )
    return out


# ------------------------------------------------------------------ LiveCodeBench

WindowEdge = datetime | date | int | None


def _epoch_ms(edge: WindowEdge) -> int | None:
    """Milliseconds since the epoch; dates are midnight UTC, naive datetimes are UTC."""
    if edge is None:
        return None
    if isinstance(edge, bool):
        raise TypeError("window edge must be a date, datetime or epoch milliseconds")
    if isinstance(edge, int):
        return edge
    if isinstance(edge, datetime):
        moment = edge if edge.tzinfo else edge.replace(tzinfo=UTC)
    elif isinstance(edge, date):
        moment = datetime(edge.year, edge.month, edge.day, tzinfo=UTC)
    else:
        raise TypeError("window edge must be a date, datetime or epoch milliseconds")
    return round(moment.timestamp() * 1000)


def _iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat()


def parse_livecodebench(
    source: Source, *, start: WindowEdge = None, end: WindowEdge = None
) -> list[ExternalScoreRow]:
    """LiveCodeBench ``performances_generation.json``: mean pass@1 per model in a window.

    Problems count when ``start <= date < end`` (either edge may be None = open). Model
    names are the display names (``model_repr``) the file keys performances by; the API
    id is in ``extra["model_id"]``. Models without problems in the window get no row.
    """
    data, name = _read_json(source)
    top = _object(data, file=name, where="top level")
    for key in ("models", "performances"):
        if not isinstance(top.get(key), list):
            raise BenchmarkFormatError(name, f"missing list {key!r}", where="top level")
    lo, hi = _epoch_ms(start), _epoch_ms(end)
    if lo is not None and hi is not None and hi <= lo:
        raise ValueError("window end must be after its start")

    models: dict[str, Mapping[str, Any]] = {}
    for i, model in enumerate(top["models"]):
        where = f"models[{i}]"
        model = _object(model, file=name, where=where)
        display = _model_name(model.get("model_repr"), file=name, where=f"{where}.model_repr")
        if display in models:
            raise BenchmarkFormatError(name, f"duplicate model {display!r}", where=where)
        models[display] = model

    totals: dict[str, list[float]] = {m: [] for m in models}
    by_difficulty: dict[str, dict[str, list[float]]] = {m: {} for m in models}
    seen: set[tuple[str, str]] = set()
    for i, row in enumerate(top["performances"]):
        where = f"performances[{i}]"
        row = _object(row, file=name, where=where)
        model = _model_name(row.get("model"), file=name, where=f"{where}.model")
        if model not in models:
            raise BenchmarkFormatError(name, f"model {model!r} not in 'models'", where=where)
        question = row.get("question_id")
        if not isinstance(question, str) or not question:
            raise BenchmarkFormatError(name, "missing question_id", where=where)
        if (model, question) in seen:
            raise BenchmarkFormatError(
                name, f"duplicate result for {model!r} on {question!r}", where=where
            )
        seen.add((model, question))
        when = row.get("date")
        if isinstance(when, bool) or not isinstance(when, int):
            raise BenchmarkFormatError(
                name, f"date must be epoch milliseconds, got {when!r}", where=f"{where}.date"
            )
        score = _number(row.get("pass@1"), file=name, where=f"{where}.pass@1", low=0, high=100)
        if (lo is None or when >= lo) and (hi is None or when < hi):
            totals[model].append(score)
            difficulty = str(row.get("difficulty", "unknown"))
            by_difficulty[model].setdefault(difficulty, []).append(score)

    out: list[ExternalScoreRow] = []
    for display, scores in totals.items():
        if not scores:
            continue
        info = models[display]
        extra = {
            "model_id": info.get("model_name"),
            "n_problems": len(scores),
            "window_start": _iso(lo),
            "window_end": _iso(hi),
            "release_date": _iso(info.get("release_date"))
            if isinstance(info.get("release_date"), int)
            else None,
            "by_difficulty": {
                d: sum(v) / len(v) for d, v in sorted(by_difficulty[display].items())
            },
        }
        out.append(
            ExternalScoreRow("livecodebench", "pass@1", display, sum(scores) / len(scores), extra)
        )
    return out


# ------------------------------------------------------------------ Chatbot Arena

_ARENA_REQUIRED = ("model", "arena_score", "95_pct_ci", "votes")
_ARENA_OPTIONAL = ("rank", "rank_stylectrl", "organization", "license", "knowledge_cutoff", "url")
_CI = re.compile(r"\+\s*(\d+(?:\.\d+)?)\s*/\s*-\s*(\d+(?:\.\d+)?)")


def _maybe_int(value: str) -> int | str | None:
    value = value.strip()
    if not value:
        return None
    return int(value) if value.isdigit() else value


def parse_chatbot_arena(source: Source) -> list[ExternalScoreRow]:
    """Chatbot Arena leaderboard CSV (``lmsys_*.csv`` or ``lmarena_text_*.csv``).

    One ``arena_score`` row per model, with ``ci_plus``/``ci_minus`` (from "+a/-b"),
    ``ci_lower``/``ci_upper``, ``votes``, the ranks and the snapshot date in ``extra``.
    A model listed twice with identical cells (apart from ``rank``, which in
    lmarena_text files is just the row number) is kept once, the first time; listed twice
    with different values it is an error.
    """
    header, rows, name = _read_csv(source, _ARENA_REQUIRED)
    position = {column: i for i, column in enumerate(header)}
    snapshot = _date_from_name(name)
    by_model: dict[str, tuple[list[str], ExternalScoreRow]] = {}
    for number, row in enumerate(rows, start=2):
        where = f"line {number}"
        if len(row) < len(header):
            raise BenchmarkFormatError(
                name, f"{len(row)} cells but the header has {len(header)}", where=where
            )
        cell = {column: row[i] for column, i in position.items()}
        model = _model_name(cell["model"], file=name, where=where)
        score = _number(cell["arena_score"], file=name, where=f"{where}, arena_score", low=0)
        ci = _CI.fullmatch(cell["95_pct_ci"].strip())
        if not ci:
            raise BenchmarkFormatError(
                name, f"95_pct_ci must look like '+a/-b', got {cell['95_pct_ci']!r}", where=where
            )
        plus, minus = float(ci.group(1)), float(ci.group(2))
        votes_text = cell["votes"].strip().replace(",", "")
        if not votes_text.isdigit():
            raise BenchmarkFormatError(
                name, f"votes must be a whole number, got {cell['votes']!r}", where=where
            )
        extra: dict[str, Any] = {
            "ci_plus": plus,
            "ci_minus": minus,
            "ci_lower": score - minus,
            "ci_upper": score + plus,
            "votes": int(votes_text),
            "snapshot": snapshot,
            "file": Path(name).name,
        }
        for column in _ARENA_OPTIONAL:
            if column in cell:
                extra[column] = _maybe_int(cell[column])
        result = ExternalScoreRow("chatbot_arena", "arena_score", model, score, extra)
        # lmarena_text's "rank" is only the row number, so a repeated row differs there.
        comparable = [value for column, value in zip(header, row, strict=False) if column != "rank"]
        if model in by_model:
            if by_model[model][0] != comparable:
                raise BenchmarkFormatError(
                    name, f"model {model!r} listed twice with different values", where=where
                )
            continue
        by_model[model] = (comparable, result)
    return [result for _, result in by_model.values()]


# ----------------------------------------------------------------------- EvalPlus

EVALPLUS_METRICS = ("humaneval", "humaneval+", "mbpp", "mbpp+")


def parse_evalplus(source: Source) -> list[ExternalScoreRow]:
    """EvalPlus leaderboard ``results.json``: greedy pass@1 on HumanEval(+) and MBPP(+)."""
    data, name = _read_json(source)
    out: list[ExternalScoreRow] = []
    for model, entry, values in _pass_at_1(data, name, EVALPLUS_METRICS):
        extra = {
            "prompted": entry.get("prompted"),
            "size": entry.get("size"),
            "link": entry.get("link"),
            "open_data": entry.get("open-data"),
        }
        for metric, value in values.items():
            if value is not None:
                out.append(ExternalScoreRow("evalplus", metric, model, value, dict(extra)))
    return out
