"""Reading external score files into boards (no database access).

Every format of ``external.benchmark_formats`` plus the CodeArena-style win-rate formats
defined here. ``read_boards(format, paths, ...)`` returns one ``ParsedBoard`` per (source,
metric) found in the files; any problem raises ``BenchmarkFormatError`` naming the file,
the place and the problem, before anything is written.

CodeArena-style win rates (no public score file exists; these are this project's formats):

* CSV with a header: ``model,win_rate`` required; optional ``tie_rate``, ``n`` (questions),
  ``baseline``, ``category``. ``win_rate``/``tie_rate`` are fractions in [0, 1]. Rows with an
  empty ``category`` (or ``overall``) are the model's overall rate; other categories are kept
  in the score's ``extra["per_category"]``. One overall row per model.
* JSON: ``{"baseline": "...", "judge": "...", "models": {"<name>": {"win_rate": 0.61,
  "tie_rate": 0.05, "n": 397, "per_category": {"<category>": {"win_rate": ...}}}}}``
  (``baseline``, ``judge``, ``tie_rate``, ``n``, ``per_category`` optional), or a list of
  ``{"model": ..., "win_rate": ...}`` objects.
* JSONL judgments, one line per question and model: ``{"model", "question_id",
  "category" (optional), "game1", "game2"}`` where game 1 shows the baseline as A and the
  model as B and game 2 swaps them; each game is the judge's raw answer ending in a verdict
  label such as ``[[B>A]]``. Win rates are computed with ``analysis.codearena``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from analysis.codearena import JudgedQuestion, win_rates

from . import benchmark_formats as bf
from .benchmark_formats import BenchmarkFormatError, ExternalScoreRow

FORMATS = (
    "livebench",
    "bigcodebench",
    "livecodebench",
    "chatbot_arena",
    "evalplus",
    "codearena",
)


@dataclass
class ParsedBoard:
    source: str
    metric: str
    release: str
    rows: list[ExternalScoreRow]
    file_name: str
    file_sha256: str
    details: dict[str, Any] = field(default_factory=dict)


def _sha256(paths: Sequence[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        try:
            digest.update(Path(path).read_bytes())
        except OSError as exc:
            raise BenchmarkFormatError(str(path), f"cannot read file: {exc}") from exc
    return digest.hexdigest()


def _group(
    rows: list[ExternalScoreRow], *, release: str, paths: Sequence[Path], details: dict[str, Any]
) -> list[ParsedBoard]:
    if not rows:
        raise BenchmarkFormatError(str(paths[0]), "no scores found")
    by_metric: dict[tuple[str, str], list[ExternalScoreRow]] = {}
    for row in rows:
        by_metric.setdefault((row.source, row.metric), []).append(row)
    sha = _sha256(paths)
    names = ", ".join(Path(p).name for p in paths)
    return [
        ParsedBoard(source, metric, release, metric_rows, names, sha, dict(details))
        for (source, metric), metric_rows in by_metric.items()
    ]


def _edge(value: date | datetime | str | None) -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"not a date (YYYY-MM-DD): {value!r}") from None


def read_boards(
    fmt: str,
    paths: Sequence[str | Path],
    *,
    release: str | None = None,
    start: date | str | None = None,
    end: date | str | None = None,
) -> list[ParsedBoard]:
    """Parse the files of one import. ``start``/``end`` only apply to LiveCodeBench."""
    files = [Path(p) for p in paths]
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    for path in files:
        if not path.is_file():
            raise BenchmarkFormatError(str(path), "no such file")
    if fmt == "livebench":
        return _livebench(files, release)
    if len(files) != 1:
        raise ValueError(f"{fmt} takes exactly one file, got {len(files)}")
    path = files[0]
    if fmt == "bigcodebench":
        rows = bf.parse_bigcodebench(path)
        subset = rows[0].extra["subset"] if rows else "full"
        return _group(rows, release=release or "", paths=files, details={"subset": subset})
    if fmt == "livecodebench":
        lo, hi = _edge(start), _edge(end)
        rows = bf.parse_livecodebench(path, start=lo, end=hi)
        window = (
            f"problems {lo.isoformat() if lo else 'first'} to {hi.isoformat() if hi else 'last'}"
        )
        details = {"window_start": lo and lo.isoformat(), "window_end": hi and hi.isoformat()}
        return _group(rows, release=release or window, paths=files, details=details)
    if fmt == "chatbot_arena":
        rows = bf.parse_chatbot_arena(path)
        snapshot = rows[0].extra.get("snapshot") if rows else None
        return _group(rows, release=release or snapshot or "", paths=files, details={})
    if fmt == "evalplus":
        return _group(bf.parse_evalplus(path), release=release or "", paths=files, details={})
    rows, details = parse_codearena(path)
    return _group(
        rows, release=release or str(details.get("baseline", "")), paths=files, details=details
    )


def _livebench(paths: list[Path], release: str | None) -> list[ParsedBoard]:
    """The table CSV plus its categories JSON (given, or found next to the table)."""
    tables = [p for p in paths if p.suffix.lower() == ".csv"]
    categories = [p for p in paths if p.suffix.lower() == ".json"]
    if len(tables) != 1:
        raise ValueError("livebench needs one table_<release>.csv")
    table = tables[0]
    if not categories:
        guess = table.with_name(table.name.replace("table_", "categories_")).with_suffix(".json")
        if not guess.is_file():
            raise BenchmarkFormatError(
                str(table), f"no categories file given and {guess.name} not found next to it"
            )
        categories = [guess]
    if len(categories) != 1:
        raise ValueError("livebench takes one categories_<release>.json")
    rows = bf.parse_livebench(table, categories[0])
    found = rows[0].extra.get("release") if rows else None
    return _group(rows, release=release or found or "", paths=[table, categories[0]], details={})


# ------------------------------------------------------------------ CodeArena-style


def _fraction(value: Any, *, file: str, where: str) -> float:
    if isinstance(value, bool):
        raise BenchmarkFormatError(file, f"expected a number, got {value!r}", where=where)
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise BenchmarkFormatError(file, f"expected a number, got {value!r}", where=where) from None
    if not math.isfinite(number):
        raise BenchmarkFormatError(file, f"not finite: {value!r}", where=where)
    if not 0.0 <= number <= 1.0:
        hint = " (a percentage? give fractions, e.g. 0.61)" if 1.0 < number <= 100.0 else ""
        raise BenchmarkFormatError(
            file, f"rate must be a fraction in [0, 1], got {number}{hint}", where=where
        )
    return number


def _count(value: Any, *, file: str, where: str) -> int | None:
    if value in (None, ""):
        return None
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit():
        raise BenchmarkFormatError(file, f"n must be a whole number, got {value!r}", where=where)
    return int(text)


def parse_codearena(path: Path) -> tuple[list[ExternalScoreRow], dict[str, Any]]:
    """Per-model win rates from a CodeArena-style CSV, JSON or JSONL file (module docstring)."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _codearena_csv(path)
    if suffix == ".json":
        return _codearena_json(path)
    if suffix in (".jsonl", ".ndjson"):
        return _codearena_judgments(path)
    raise BenchmarkFormatError(str(path), "CodeArena files must be .csv, .json or .jsonl")


def _text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BenchmarkFormatError(str(path), f"not UTF-8 text: {exc}") from exc


def _codearena_csv(path: Path) -> tuple[list[ExternalScoreRow], dict[str, Any]]:
    name = str(path)
    reader = csv.DictReader(io.StringIO(_text(path), newline=""))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in ("model", "win_rate") if c not in header]
    if missing:
        raise BenchmarkFormatError(name, f"missing column(s) {missing}", where="header")
    overall: dict[str, dict[str, Any]] = {}
    categories: dict[str, dict[str, dict[str, Any]]] = {}
    baselines = set()
    for number, raw in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "") for k, v in raw.items()}
        if None in raw:
            raise BenchmarkFormatError(name, "more cells than the header", where=f"line {number}")
        where = f"line {number}"
        model = row["model"].strip()
        if not model:
            raise BenchmarkFormatError(name, "empty model name", where=where)
        entry = {
            "win_rate": _fraction(row["win_rate"], file=name, where=f"{where}, win_rate"),
            "tie_rate": _fraction(row["tie_rate"], file=name, where=f"{where}, tie_rate")
            if row.get("tie_rate", "").strip()
            else None,
            "n": _count(row.get("n"), file=name, where=f"{where}, n"),
        }
        if row.get("baseline", "").strip():
            baselines.add(row["baseline"].strip())
        category = row.get("category", "").strip()
        if category and category.lower() != "overall":
            categories.setdefault(model, {})[category] = entry
            continue
        if model in overall:
            raise BenchmarkFormatError(name, f"duplicate model {model!r}", where=where)
        overall[model] = entry
    if len(baselines) > 1:
        raise BenchmarkFormatError(name, f"several baselines in one file: {sorted(baselines)}")
    orphans = sorted(set(categories) - set(overall))
    if orphans:
        raise BenchmarkFormatError(name, f"per-category rows but no overall row for {orphans}")
    details = {"baseline": baselines.pop()} if baselines else {}
    return _rows(overall, categories, details), details


def _rows(
    overall: dict[str, Any], categories: dict[str, Any], details: dict[str, Any]
) -> list[ExternalScoreRow]:
    return [
        ExternalScoreRow(
            "codearena",
            "win_rate",
            model,
            entry["win_rate"],
            {
                **details,
                "tie_rate": entry.get("tie_rate"),
                "n": entry.get("n"),
                "per_category": categories.get(model, {}),
            },
        )
        for model, entry in overall.items()
    ]


def _codearena_json(path: Path) -> tuple[list[ExternalScoreRow], dict[str, Any]]:
    name = str(path)
    try:
        data = json.loads(_text(path))
    except json.JSONDecodeError as exc:
        raise BenchmarkFormatError(
            name, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    details: dict[str, Any] = {}
    if isinstance(data, dict):
        for key in ("baseline", "judge"):
            if data.get(key) is not None:
                details[key] = str(data[key])
        models = data.get("models")
        if not isinstance(models, dict) or not models:
            raise BenchmarkFormatError(name, "expected a non-empty object 'models'", where="top")
        items = list(models.items())
    elif isinstance(data, list) and data:
        items = []
        for i, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("model"), str):
                raise BenchmarkFormatError(name, "expected an object with 'model'", where=f"[{i}]")
            items.append((item["model"], item))
    else:
        raise BenchmarkFormatError(name, "expected an object with 'models' or a non-empty list")
    overall: dict[str, dict[str, Any]] = {}
    categories: dict[str, dict[str, dict[str, Any]]] = {}
    for model, entry in items:
        model = str(model).strip()
        if not model:
            raise BenchmarkFormatError(name, "empty model name")
        if not isinstance(entry, dict) or "win_rate" not in entry:
            raise BenchmarkFormatError(name, "expected an object with 'win_rate'", where=model)
        if model in overall:
            raise BenchmarkFormatError(name, f"duplicate model {model!r}")
        overall[model] = {
            "win_rate": _fraction(entry["win_rate"], file=name, where=f"{model}.win_rate"),
            "tie_rate": None
            if entry.get("tie_rate") is None
            else _fraction(entry["tie_rate"], file=name, where=f"{model}.tie_rate"),
            "n": _count(entry.get("n"), file=name, where=f"{model}.n"),
        }
        per_category = entry.get("per_category") or {}
        if not isinstance(per_category, dict):
            raise BenchmarkFormatError(name, "per_category must be an object", where=model)
        for category, value in per_category.items():
            where = f"{model}.per_category.{category}"
            if not isinstance(value, dict) or "win_rate" not in value:
                raise BenchmarkFormatError(name, "expected an object with 'win_rate'", where=where)
            categories.setdefault(model, {})[str(category)] = {
                "win_rate": _fraction(value["win_rate"], file=name, where=where),
                "n": _count(value.get("n"), file=name, where=f"{where}.n"),
            }
    return _rows(overall, categories, details), details


def _codearena_judgments(path: Path) -> tuple[list[ExternalScoreRow], dict[str, Any]]:
    name = str(path)
    questions: dict[str, list[JudgedQuestion]] = {}
    seen: set[tuple[str, str]] = set()
    for number, line in enumerate(_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BenchmarkFormatError(name, f"invalid JSON: {exc.msg}", where=where) from exc
        if not isinstance(item, dict):
            raise BenchmarkFormatError(name, "each line must be a JSON object", where=where)
        missing = [k for k in ("model", "question_id", "game1", "game2") if k not in item]
        if missing:
            raise BenchmarkFormatError(name, f"missing key(s) {missing}", where=where)
        model, question = str(item["model"]).strip(), str(item["question_id"])
        if not model:
            raise BenchmarkFormatError(name, "empty model name", where=where)
        if (model, question) in seen:
            raise BenchmarkFormatError(
                name, f"question {question!r} judged twice for {model!r}", where=where
            )
        seen.add((model, question))
        for game in ("game1", "game2"):
            if item[game] is not None and not isinstance(item[game], str):
                raise BenchmarkFormatError(name, f"{game} must be the judge's text", where=where)
        questions.setdefault(model, []).append(
            JudgedQuestion.from_judgments(
                item["game1"],
                item["game2"],
                category=item.get("category"),
                question_id=question,
            )
        )
    if not questions:
        raise BenchmarkFormatError(name, "no judgments")
    overall: dict[str, dict[str, Any]] = {}
    categories: dict[str, dict[str, dict[str, Any]]] = {}
    for model, judged in questions.items():
        summary = win_rates(judged)
        overall[model] = {
            "win_rate": summary.overall.win_rate,
            "tie_rate": summary.overall.tie_rate,
            "n": summary.overall.n,
        }
        categories[model] = {
            c: {"win_rate": r.win_rate, "tie_rate": r.tie_rate, "n": r.n}
            for c, r in summary.per_category.items()
        }
    return _rows(overall, categories, {}), {}
