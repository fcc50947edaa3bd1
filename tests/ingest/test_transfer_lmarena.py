"""import_battles reads LMArena's preference-dataset layouts (33k, 55k, 140k column sets) from
Parquet and JSONL into the `external` source; files written here, nothing downloaded."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command

from ingest.models import Battle, BattleSource, CodeContext, Outcome, Privacy
from ingest.pseudonyms import pseudonymise_user

A, B = "gpt-4o-2024-08-06", "codestral-2405"


def conversation(prompt: str, answer: str) -> list[dict]:
    return [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]


def rows_33k() -> list[dict]:
    """lmsys/chatbot_arena_conversations: winner with "tie (bothbad)", judge, tstamp."""
    winners = ["model_a", "model_b", "tie", "tie (bothbad)"]
    return [
        {
            "question_id": f"q{i:04x}",
            "model_a": A,
            "model_b": B,
            "winner": winners[i % 4],
            "judge": f"arena_user_{i % 3}",
            "conversation_a": conversation(
                "Write a Python function that reverses a list", "x" * (10 + i)
            ),
            "conversation_b": conversation("Write a Python function that reverses a list", "y" * 5),
            "turn": 1,
            "anony": True,
            "language": "English",
            "tstamp": 1682351591.1322 + i,
            "openai_moderation": {"flagged": False},
            "toxic_chat_tag": {"roberta-large": {"flagged": False}},
        }
        for i in range(8)
    ]


def rows_55k() -> list[dict]:
    """lmsys-arena-human-preference-55k: JSON-encoded texts, one-hot winner_* columns."""
    flags = [(1, 0, 0), (0, 1, 0), (0, 0, 1)]
    return [
        {
            "id": 30192 + i,
            "model_a": A,
            "model_b": B,
            "prompt": json.dumps(["How do I sort a dict by value?"]),
            "response_a": json.dumps(["Use sorted(d.items(), key=lambda kv: kv[1])."]),
            "response_b": json.dumps(["dict(sorted(d.items()))"]),
            "winner_model_a": flags[i % 3][0],
            "winner_model_b": flags[i % 3][1],
            "winner_tie": flags[i % 3][2],
        }
        for i in range(6)
    ]


def rows_140k() -> list[dict]:
    """arena-human-preference-140k: content as a list of parts, timestamp, both_bad."""
    winners = ["model_a", "model_b", "tie", "both_bad"]

    def conv(text: str) -> list[dict]:
        return [
            {"role": "user", "content": [{"type": "text", "text": "Explain Rust lifetimes"}]},
            {"role": "assistant", "content": [{"type": "text", "text": text}]},
        ]

    return [
        {
            "id": f"0a1b2c3d-0000-4000-8000-{i:012d}",
            "model_a": A,
            "model_b": B,
            "winner": winners[i % 4],
            "evaluation_session_id": f"session-{i % 2}",
            "evaluation_order": 1,
            "conversation_a": conv("Lifetimes name how long a borrow lives."),
            "conversation_b": conv("They are annotations."),
            "full_conversation": [],
            "conv_metadata": {"sum_user_tokens": 4},
            "category_tag": {"criteria_v0.1": {"specificity": True}},
            "language": "en",
            "is_code": True,
            "timestamp": datetime(2025, 4, 1, 12, i, tzinfo=UTC),
        }
        for i in range(8)
    ]


LAYOUTS = {"33k": rows_33k, "55k": rows_55k, "140k": rows_140k}
OUTCOMES = {
    "33k": [Outcome.A, Outcome.B, Outcome.TIE, Outcome.BOTH_BAD] * 2,
    "55k": [Outcome.A, Outcome.B, Outcome.TIE] * 2,
    "140k": [Outcome.A, Outcome.B, Outcome.TIE, Outcome.BOTH_BAD] * 2,
}


def write(rows: list[dict], path) -> None:
    if path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        path.write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))


def run_import(path) -> str:
    out = io.StringIO()
    call_command("import_battles", str(path), "--quiet-progress", stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_lmarena_layouts_import_as_an_external_source(models, tmp_path, layout, suffix):
    rows = LAYOUTS[layout]()
    path = tmp_path / f"arena-{layout}{suffix}"
    write(rows, path)
    out = run_import(path)
    assert f"{len(rows)} imported" in out, out
    battles = list(Battle.objects.order_by("id"))
    assert [b.outcome for b in battles] == OUTCOMES[layout]
    assert {b.source for b in battles} == {BattleSource.EXTERNAL}
    assert {(b.model_a.key, b.model_b.key) for b in battles} == {(A, B)}
    # Conversations feed labels and lengths, and are not kept (stored as Private votes).
    assert {b.privacy for b in battles} == {Privacy.PRIVATE}
    assert CodeContext.objects.count() == 0
    assert all(b.prefix_chars and b.completion_a_chars for b in battles)
    if layout == "33k":
        assert battles[0].received_at == datetime.fromtimestamp(1682351591, tz=UTC).replace(
            microsecond=132200
        )
        assert battles[0].user_hash == pseudonymise_user("arena_user_0")
        assert battles[0].completion_a_chars == 10
    if layout == "140k":
        assert battles[3].received_at == datetime(2025, 4, 1, 12, 3, tzinfo=UTC)
        assert len({b.user_hash for b in battles}) == 2
    if layout == "55k":
        assert {b.user_hash for b in battles} == {""}  # the layout names no voter
    # Importing the same file again stores nothing new.
    assert f"{len(rows)} already present" in run_import(path)


def test_rows_without_a_single_winner_are_rejected_by_line(models, tmp_path):
    rows = rows_55k()[:3]
    rows[1]["winner_tie"] = 1  # two flags set
    rows[2]["model_b"] = A  # a model against itself
    path = tmp_path / "bad.jsonl"
    write(rows, path)
    err = io.StringIO()
    call_command("import_battles", str(path), "--quiet-progress", stdout=io.StringIO(), stderr=err)
    assert "bad.jsonl:2: rejected: winner" in err.getvalue()
    assert "bad.jsonl:3: rejected: model_b" in err.getvalue()
    assert Battle.objects.count() == 1
