"""Import and export of battles: the Copilot Arena sample CSV, the project's JSONL format, and
the release layouts (this project's dataset releases and LMArena's preference datasets) in
JSONL or Parquet.

Every row goes through the same validation as the API (`BattleSerializer`), so an import
can never store what a client could not post. Bad rows are reported with their line (a
Parquet file's row number) and the reason, and the good rows are stored; importing the same
file again stores nothing new (pair ids of CSV and LMArena rows are derived from their
content or their own id).

LMArena's layouts (the 33k, 55k, 100k and 140k column sets: `model_a`, `model_b`, `winner`
or `winner_model_a/_b/_tie`, `conversation_a/_b` or `prompt`/`response_a/_b`, `tstamp` or
`timestamp`, `judge` ...) are stored as source `external`, as Private votes: the
conversations feed the labels and lengths in memory and are not kept (docs/data.md).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.utils.dateparse import parse_datetime

from catalogue.models import ArenaModel
from catalogue.selectors import resolve_model_key
from catalogue.services import add_models
from core.errors import flatten_errors

from .models import CODE_FIELDS, SIZE_FIELDS, Battle, BattleSource, CodeContext
from .serializers import OUTCOME_NAMES, BattleSerializer
from .services import BatchRejected, record_battles
from .votes import VoteIn

CHUNK = 500
OUTCOME_KEYS = {int(v): k for k, v in OUTCOME_NAMES.items()}
# A row with one of these and no `outcome` is in a release layout (`release_row`).
WINNER_COLUMNS = ("winner", "winner_model_a", "winner_model_b", "winner_tie")
# LMArena's winner values; the 33k set writes "tie (bothbad)" for both bad.
WINNERS = {**{k: k for k in OUTCOME_NAMES}, "tie (bothbad)": "both_bad"}
# Who voted, by layout: this project's releases (already a 64-character pseudonym, or none),
# then LMArena's (their ids, pseudonymised here like any client's user id).
USER_COLUMNS = ("judge", "judge_hash", "evaluation_session_id")
# This project's own columns, taken as they are where a release row has them.
NATIVE_COLUMNS = (
    "kind",
    "privacy",
    "file_type",
    *SIZE_FIELDS,
    "client_version",
    "source",
    *CODE_FIELDS,
)


@dataclass
class ImportReport:
    rows: int = 0
    created: int = 0
    duplicates: int = 0
    rejected: list[tuple[int, str]] = field(default_factory=list)  # (line, reason)
    unknown_models: set[str] = field(default_factory=set)  # keys no model or alias resolves
    added_models: list[str] = field(default_factory=list)  # ... created (add_unknown_models)


def _csv_rows(stream: IO[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Copilot Arena sample rows as native battle dicts. model_a is the top completion. The
    release layout has no user column: its battles are stored without a user (a `user_id`
    column, where a file has one, is taken)."""
    csv.field_size_limit(1 << 30)
    reader = csv.DictReader(stream)
    missing = {"prefix", "suffix", "model_a", "model_b", "acceptedIndex"} - set(
        reader.fieldnames or []
    )
    if missing:
        raise ValueError(f"Not a Copilot Arena sample CSV: missing columns {sorted(missing)}")
    line = reader.line_num
    for row in reader:
        digest = hashlib.sha256(
            json.dumps([row.get(k) for k in sorted(row, key=str)], default=str).encode()
        ).hexdigest()[:32]
        accepted = row.get("acceptedIndex")
        outcome = {"0": "model_a", "0.0": "model_a", "1": "model_b", "1.0": "model_b"}.get(
            (accepted or "").strip(), accepted
        )
        yield (
            line + 1,
            {
                "pair_id": f"csv-{digest}",
                "user_id": row.get("user_id") or "",
                "model_a": row.get("model_a"),
                "model_b": row.get("model_b"),
                "outcome": outcome,
                "kind": "completion",
                "privacy": "Research",
                "prefix": row.get("prefix"),
                "suffix": row.get("suffix"),
                "completion_a": row.get("completion_a"),
                "completion_b": row.get("completion_b"),
            },
        )
        line = reader.line_num


def _jsonl_rows(stream: IO[str]) -> Iterator[tuple[int, dict[str, Any] | str]]:
    for number, text in enumerate(stream, start=1):
        if not text.strip():
            continue
        try:
            yield number, json.loads(text)
        except json.JSONDecodeError as exc:
            yield number, f"not valid JSON: {exc.msg} at column {exc.colno}"


def _parquet_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    import pyarrow.parquet as pq  # only for Parquet files (a large import)

    number = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=CHUNK):
        for row in batch.to_pylist():
            number += 1
            yield number, row


def _turns(value: object) -> list[tuple[str, str]]:
    """(role, text) of each turn of an LMArena conversation: a list of {role, content}, the
    content a string or (140k) a list of parts with `text`; given as a list or as JSON."""
    if isinstance(value, str):
        text = value
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return [("user", text)]
    turns = []
    for turn in value if isinstance(value, list) else []:
        if not isinstance(turn, dict):
            continue
        content = turn.get("content")
        if isinstance(content, list):
            content = "\n".join(
                str(p.get("text") or "") for p in content if isinstance(p, dict) and p.get("text")
            )
        turns.append((str(turn.get("role") or ""), str(content or "")))
    return turns


def _texts(value: object) -> list[str]:
    """The 55k set's `prompt` / `response_a` / `response_b`: JSON lists of strings."""
    if isinstance(value, str):
        text = value
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return [text]
    return [str(v) for v in value if v is not None] if isinstance(value, list) else []


def _winner(row: dict[str, Any]) -> str | None:
    if "winner" in row:
        return WINNERS.get(str(row["winner"]).strip())
    chosen = [k for k in ("model_a", "model_b", "tie") if row.get(f"winner_{k}") in (1, True)]
    return chosen[0] if len(chosen) == 1 else None


def _timestamp(row: dict[str, Any]) -> str | None:
    value = row.get("tstamp", row.get("timestamp"))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), tz=UTC).isoformat()
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    return value if isinstance(value, str) else None


def _pair_id(row: dict[str, Any]) -> object:
    """This project's release id as it is; LMArena rows an id derived from theirs (or from
    the whole row where a layout has none), so a re-import finds them as duplicates."""
    if "kind" in row and isinstance(row.get("id"), str):
        return row["id"]
    own = row.get("question_id", row.get("id"))
    basis = [own, row.get("model_a"), row.get("model_b")] if own is not None else row
    return "ext-" + hashlib.sha256(json.dumps(basis, default=str).encode()).hexdigest()[:40]


def release_row(row: dict[str, Any]) -> dict[str, Any] | str:
    """A row of a release layout (this project's, or one of LMArena's) as a native battle dict."""
    winner = _winner(row)
    if winner is None:
        return "winner: not one of model_a, model_b, tie, both_bad (or no single winner_* flag)"
    native = {
        "pair_id": _pair_id(row),
        "model_a": row.get("model_a"),
        "model_b": row.get("model_b"),
        "outcome": winner,
        "received_at": _timestamp(row),
        **{k: row[k] for k in NATIVE_COLUMNS if row.get(k) is not None},
    }
    if "user_hash" in row:
        native["user_hash"] = row["user_hash"] or ""
    else:
        user = next((row[k] for k in USER_COLUMNS if row.get(k) not in (None, "")), None)
        native["user_id"] = str(user) if user is not None else ""
    if "privacy" not in native:
        native.update(_conversation(row), kind="completion", privacy="Private")
        native.setdefault("source", BattleSource.EXTERNAL)
    return native


def _conversation(row: dict[str, Any]) -> dict[str, Any]:
    """An LMArena battle's texts as a vote's context (kept in memory only: Private): the
    user's turns as the prefix, each side's answers as its completion, cut to the code
    limit (the lengths then count what was kept)."""
    limit = settings.ARENA_MAX_CODE_CHARS
    if "conversation_a" in row:
        a, b = _turns(row.get("conversation_a")), _turns(row.get("conversation_b"))
        prompt = [t for role, t in a if role == "user"]
        answers = [[t for role, t in side if role == "assistant"] for side in (a, b)]
    else:
        prompt = _texts(row.get("prompt"))
        answers = [_texts(row.get("response_a")), _texts(row.get("response_b"))]
    return {
        "prefix": "\n\n".join(prompt)[:limit],
        "completion_a": "\n\n".join(answers[0])[:limit],
        "completion_b": "\n\n".join(answers[1])[:limit],
    }


def _to_vote(item: dict[str, Any] | str, source: str) -> VoteIn | str:
    if isinstance(item, str):
        return item
    if not isinstance(item, dict):
        return "each line must be a JSON object"
    if "outcome" not in item and any(k in item for k in WINNER_COLUMNS):
        item = release_row(item)
        if isinstance(item, str):
            return item
    data = dict(item)
    user_hash = data.pop("user_hash", None) if "user_id" not in data else None
    if user_hash is not None:
        if not (isinstance(user_hash, str) and len(user_hash) in (0, 64)):
            return "user_hash: must be a 64-character pseudonymised id (empty: no user)"
        data["user_id"] = "(pseudonymised)" if user_hash else ""
    s = BattleSerializer(data=data)
    if not s.is_valid():
        fields = flatten_errors(s.errors)
        return "; ".join(f"{k}: {v[0]}" for k, v in fields.items())
    row_source = str(data["source"]) if data.get("source") in BattleSource.values else source
    received = data.get("received_at")
    received_at = parse_datetime(received) if isinstance(received, str) else None
    vote = BattleSerializer.vote_from(s.validated_data, source=row_source)
    return replace(vote, user_hash=user_hash or "", received_at=received_at)


def _unknown_keys(item: dict[str, Any] | str) -> list[str]:
    if not isinstance(item, dict):
        return []
    keys = [item.get("model_a"), item.get("model_b")]
    return [k for k in keys if isinstance(k, str) and k and resolve_model_key(k) is None]


def import_battles(
    path: Path,
    *,
    progress: Callable[[Iterable[Any]], Iterable[Any]] = lambda rows: rows,
    add_unknown_models: bool = False,
) -> ImportReport:
    """Import a `.csv` (Copilot Arena sample), `.jsonl` (our export, or a release layout) or
    `.parquet` (a release layout) file; `.csv.gz` and `.jsonl.gz` are read through gzip.

    A row naming a model the catalogue does not know is rejected (listed in
    `unknown_models`), unless `add_unknown_models`: then the model is created first (named
    after its key, audited) -- for restoring an export onto a fresh database."""
    report = ImportReport()
    name = path.name.lower()
    compressed = name.endswith(".gz")  # a text format gzipped (a release's JSONL)
    suffix = Path(name.removesuffix(".gz")).suffix
    if suffix not in (".csv", ".jsonl", ".ndjson") and (compressed or suffix != ".parquet"):
        raise ValueError(
            f"Unknown file type '{''.join(path.suffixes)}': expected .csv, .jsonl or .parquet "
            "(.csv and .jsonl may be gzipped: .gz)"
        )
    opener = gzip.open if compressed else open
    with opener(path, "rt", encoding="utf-8", newline="") as stream:
        if suffix == ".csv":
            rows: Iterable[tuple[int, Any]] = _csv_rows(stream)
        elif suffix == ".parquet":
            rows = _parquet_rows(path)
        else:
            rows = _jsonl_rows(stream)
        chunk: list[tuple[int, VoteIn]] = []
        for line, item in progress(rows):
            report.rows += 1
            unknown = _unknown_keys(item)
            if unknown and add_unknown_models:
                report.added_models += add_models(
                    keys=unknown, reason=f"import_battles --add-unknown-models {path.name}"
                )
            else:
                report.unknown_models.update(unknown)
            vote = _to_vote(item, BattleSource.IMPORT)
            if isinstance(vote, str):
                report.rejected.append((line, vote))
                continue
            chunk.append((line, vote))
            if len(chunk) >= CHUNK:
                _store(chunk, report)
                chunk = []
        if chunk:
            _store(chunk, report)
    return report


def _store(chunk: list[tuple[int, VoteIn]], report: ImportReport) -> None:
    while chunk:
        try:
            result = record_battles(votes=[v for _, v in chunk])
        except BatchRejected as exc:
            bad = set(exc.errors)
            for i in sorted(bad):
                fields = flatten_errors(exc.errors[i])
                report.rejected.append(
                    (chunk[i][0], "; ".join(f"{k}: {v[0]}" for k, v in fields.items()))
                )
            chunk = [c for i, c in enumerate(chunk) if i not in bad]
            continue
        report.created += result.created
        report.duplicates += result.duplicates
        return


def export_rows(
    *, include_code: bool = False, sources: list[str] | None = None
) -> Iterator[dict[str, Any]]:
    """Battles as dicts of the JSONL export format (pseudonymised users, model keys)."""
    keys = dict(ArenaModel.objects.values_list("id", "key"))
    qs = Battle.objects.order_by("id")
    if sources:
        qs = qs.filter(source__in=sources)
    if include_code:
        qs = qs.select_related("code")
    for b in qs.iterator(chunk_size=2000):
        row = {
            "pair_id": b.pair_id,
            "user_hash": b.user_hash,
            "model_a": keys[b.model_a_id],
            "model_b": keys[b.model_b_id],
            "outcome": OUTCOME_KEYS[b.outcome],
            "kind": b.kind,
            "privacy": b.privacy,
            "file_type": b.file_type,
            "latency_a_ms": b.latency_a_ms,
            "latency_b_ms": b.latency_b_ms,
            "prefix_chars": b.prefix_chars,
            "suffix_chars": b.suffix_chars,
            "completion_a_chars": b.completion_a_chars,
            "completion_b_chars": b.completion_b_chars,
            "client_version": b.client_version,
            "received_at": b.received_at.isoformat()
            if isinstance(b.received_at, datetime)
            else None,
            "source": b.source,
            "excluded": b.excluded,
        }
        if include_code and b.privacy == "Research" and hasattr(b, "code"):
            row.update({name: getattr(b.code, name) for name in CodeContext.FIELDS})
        yield row
