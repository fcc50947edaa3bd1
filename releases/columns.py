"""The columns of a release: names, Arrow types and meanings, in file order.

One list serves the Parquet schema, the JSONL keys, the dataset card's field table and its
Hugging Face `dataset_info` header. The first columns follow LMArena's preference datasets
(`model_a`, `model_b`, `winner`, `tstamp`, `language`, `category_tag`, `is_code`), so their
loaders read a release; the rest are this arena's own. The Copilot Arena CSV view has its
own short list (`CSV_COLUMNS`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

# Numbers stored on a battle that a release row carries as they are.
MEASURES = (
    "latency_a_ms",
    "latency_b_ms",
    "prefix_chars",
    "suffix_chars",
    "completion_a_chars",
    "completion_b_chars",
    "completion_a_lines",
    "completion_b_lines",
    "pair_probability",
)


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    meaning: str


CATEGORY_TAG = pa.struct(
    [
        ("task_type", pa.string()),
        ("programming_language", pa.string()),
        ("context_bucket", pa.string()),
    ]
)
CODE_FIELDS = ("prefix", "suffix", "completion_a", "completion_b", "code_to_edit", "user_input")

COLUMNS: tuple[Column, ...] = (
    Column("id", pa.string(), "Battle id, keyed for this release (joins nothing outside it)."),
    Column("model_a", pa.string(), "Model whose completion was shown on top (position 0)."),
    Column("model_b", pa.string(), "Model whose completion was shown at the bottom."),
    Column("winner", pa.string(), "model_a, model_b, tie or both_bad."),
    Column("tstamp", pa.float64(), "When the vote arrived: Unix time in seconds (UTC)."),
    Column(
        "language",
        pa.string(),
        "Natural language of the code's comments and identifiers (ISO 639-1, or unknown), "
        "as LMArena's `language`.",
    ),
    Column(
        "category_tag",
        CATEGORY_TAG,
        "Slice labels: task type, programming language and context-length bucket.",
    ),
    Column("is_code", pa.bool_(), "Always true: every battle is about code."),
    Column(
        "user_hash",
        pa.string(),
        "Voter pseudonym, re-keyed for this release (64 hex characters); null = no user id.",
    ),
    Column("kind", pa.string(), "completion (inline completion) or edit (inline edit)."),
    Column("task_type", pa.string(), "Task type labelled from the code context."),
    Column(
        "programming_language", pa.string(), "Programming language, from the editor's file type."
    ),
    Column(
        "context_bucket", pa.string(), "Context length bucket in tokens: <1k, 1-4k, 4-16k, >16k."
    ),
    Column("file_type", pa.string(), "The editor's language id or file extension."),
    Column(
        "privacy",
        pa.string(),
        "The voter's setting: Research (code kept) or Private/Debug (no code, ever).",
    ),
    Column("source", pa.string(), "extension, api, import (or simulated, when asked for)."),
    Column("latency_a_ms", pa.float64(), "Latency of model_a's completion in milliseconds."),
    Column("latency_b_ms", pa.float64(), "Latency of model_b's completion in milliseconds."),
    Column("prefix_chars", pa.int64(), "Characters of code before the cursor."),
    Column("suffix_chars", pa.int64(), "Characters of code after the cursor."),
    Column("completion_a_chars", pa.int64(), "Characters of model_a's completion."),
    Column("completion_b_chars", pa.int64(), "Characters of model_b's completion."),
    Column("completion_a_lines", pa.int64(), "Lines of model_a's completion."),
    Column("completion_b_lines", pa.int64(), "Lines of model_b's completion."),
    Column(
        "pair_probability",
        pa.float64(),
        "Probability with which the arena's sampler drew this pair (null: not served here).",
    ),
    Column("client_version", pa.string(), "The extension's version."),
    Column("excluded", pa.bool_(), "Excluded by moderation (only in releases that ask for it)."),
    Column(
        "code_redacted",
        pa.bool_(),
        "True when the secret scan flagged this battle's code: its code fields are null.",
    ),
    Column("prefix", pa.string(), "Code before the cursor (Research votes only, else null)."),
    Column("suffix", pa.string(), "Code after the cursor (Research votes only, else null)."),
    Column("completion_a", pa.string(), "model_a's completion (Research votes only, else null)."),
    Column("completion_b", pa.string(), "model_b's completion (Research votes only, else null)."),
    Column("code_to_edit", pa.string(), "Edit battles: the code to edit (Research votes only)."),
    Column("user_input", pa.string(), "Edit battles: the instruction (Research votes only)."),
)
SCHEMA = pa.schema([(c.name, c.type) for c in COLUMNS])

# Copilot Arena's released sample (`copilot_arena_examples_v1.csv`): completion battles with
# code and a winner; acceptedIndex 0 = the top completion (model_a) was accepted.
CSV_COLUMNS = (
    "prefix",
    "suffix",
    "model_a",
    "model_b",
    "acceptedIndex",
    "completion_a",
    "completion_b",
)


def hf_dtype(t: pa.DataType) -> str:
    """The Hugging Face `datasets` dtype name of an Arrow type (the card's header)."""
    if pa.types.is_string(t):
        return "string"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_float64(t):
        return "float64"
    return str(t)
