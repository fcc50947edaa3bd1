"""What the arena knows about each external source: names, kinds, metric labels, the seed's
published correlations, and the demo files ``load_demo`` imports.

Plain data, no database access. Sources are created in the database from this table on
first import (``services.ensure_source``); an admin may edit them afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from .models import SourceKind


@dataclass(frozen=True)
class SourceInfo:
    key: str
    name: str
    kind: str
    url: str
    description: str
    metrics: dict[str, str] = field(default_factory=dict)  # metric -> label
    published: str = ""  # the seed's published Spearman against the arena, for context


SOURCES: dict[str, SourceInfo] = {
    s.key: s
    for s in (
        SourceInfo(
            "livebench",
            "LiveBench",
            SourceKind.STATIC,
            "https://livebench.ai",
            "Contamination-limited benchmark with monthly new questions; scores 0-100.",
            {"overall": "global average", "coding": "coding"},
            "≤ 0.1",
        ),
        SourceInfo(
            "bigcodebench",
            "BigCodeBench",
            SourceKind.STATIC,
            "https://bigcode-bench.github.io",
            "Python tasks using many libraries; calibrated greedy pass@1 (%).",
            {
                "complete": "complete (full)",
                "instruct": "instruct (full)",
                "average": "average (full)",
                "hard_complete": "complete (Hard)",
                "hard_instruct": "instruct (Hard)",
                "hard_average": "average (Hard)",
            },
            "≤ 0.1",
        ),
        SourceInfo(
            "livecodebench",
            "LiveCodeBench",
            SourceKind.STATIC,
            "https://livecodebench.github.io",
            "Contest problems released over time; mean pass@1 (%) over a date window.",
            {"pass@1": "code generation pass@1"},
            "≤ 0.1",
        ),
        SourceInfo(
            "chatbot_arena",
            "Chatbot Arena",
            SourceKind.PREFERENCE,
            "https://lmarena.ai",
            "Human preference between chat answers (overall text arena); Bradley-Terry score.",
            {"arena_score": "overall arena score"},
            "0.48 (overall); 0.62 (coding)",
        ),
        SourceInfo(
            "evalplus",
            "EvalPlus",
            SourceKind.STATIC,
            "https://evalplus.github.io",
            "HumanEval and MBPP with extra tests; greedy pass@1 (%).",
            {
                "humaneval": "HumanEval",
                "humaneval+": "HumanEval+",
                "mbpp": "MBPP",
                "mbpp+": "MBPP+",
            },
        ),
        SourceInfo(
            "codearena",
            "CodeArena (judge)",
            SourceKind.JUDGE,
            "https://github.com/QwenLM/Qwen2.5-Coder/tree/main/qwencoder-eval/instruct/CodeArena",
            "LLM-judge win rate against a baseline, each question judged twice with the order "
            "swapped.",
            {"win_rate": "win rate vs baseline"},
        ),
    )
}

PUBLISHED_REFERENCE = {
    "source": "Copilot Arena (Chi et al., 2025), Spearman against its Jan 2025 board",
    "values": [
        {"against": "Chatbot Arena (coding)", "spearman": 0.62, "computed_here": False},
        {"against": "Chatbot Arena (overall)", "spearman": 0.48, "computed_here": True},
        {
            "against": "Static benchmarks (LiveBench, BigCodeBench, LiveCodeBench)",
            "spearman": "≤ 0.1 (most of them)",
            "computed_here": True,
        },
    ],
    "coding_note": (
        "the public CSV scrape of Chatbot Arena (fboulnois/llm-leaderboard-csv) has only the "
        "overall text leaderboard and never had a coding file."
    ),
}


@dataclass(frozen=True)
class DemoImport:
    format: str
    paths: tuple[str, ...]  # relative to settings.BASE_DIR (the arena_site package)
    options: dict[str, Any] = field(default_factory=dict)


# The files `load_demo` imports (one release per source, nearest to the seed's Jan 2025
# board). LiveCodeBench: problems from Aug 2024 on, after every contamination cut-off the
# file lists, so no model saw them in training.
DEMO_IMPORTS: tuple[DemoImport, ...] = (
    DemoImport(
        "livebench",
        (
            "data/benchmarks/livebench/table_2024_08_31.csv",
            "data/benchmarks/livebench/categories_2024_08_31.json",
        ),
    ),
    DemoImport("bigcodebench", ("data/benchmarks/bigcodebench/results.json",)),
    DemoImport("bigcodebench", ("data/benchmarks/bigcodebench/results-hard.json",)),
    DemoImport(
        "livecodebench",
        ("data/benchmarks/livecodebench/performances_generation.json",),
        {"start": date(2024, 8, 1)},
    ),
    DemoImport("chatbot_arena", ("data/benchmarks/chatbot-arena/lmsys_2024_12_31.csv",)),
    DemoImport("evalplus", ("data/benchmarks/evalplus/results.json",)),
)
