"""The alias table for the demo catalogue, from arena_site/data/benchmarks/SOURCES.md.

Each entry: (source, the source's exact spelling, catalogue key or None, note, caveat).
``None`` records a name that is deliberately *not* matched (a near-duplicate SOURCES.md
warns about, or a match too uncertain to use by default); an admin can change it.
``caveat=True`` marks an assumption: its note is shown next to correlations that use it.

Decisions that follow SOURCES.md's alias notes:

* deepseek-coder-fim -> DeepSeek V2.5 spellings, marked as an assumption: the FiM endpoint
  served V2.5, then V2.5-1210 (from 2024-12-10), then V3 (from 2024-12-26), and the sample
  battles carry no dates, so the checkpoint behind most battles cannot be checked here.
  The -1210 refreshes, DeepSeek-Coder-V2 rows and LiveCodeBench's DeepSeek-V3 are not used.
* codestral-2405 -> ``Codestral-22B-v0.1`` (BigCodeBench, EvalPlus): the open weights of the
  May 2024 release. LiveCodeBench's ``Codestral-Latest`` is left unmatched: a moving alias,
  possibly already codestral-2501 (Jan 2025) when that file was made.
* Llama 3.1 405B on Chatbot Arena: the bf16 row is used, the fp8 duplicate is not.
* gpt-4o-2024-11-20 is in the demo catalogue but not in SOURCES.md's table; the entries
  below were checked against the files (BigCodeBench ``GPT-4o-2024-11-20``; LiveBench uses
  the catalogue key itself). Chatbot Arena's ``ChatGPT-4o-latest (2024-11-20)`` is the
  ChatGPT endpoint, not this API model, so it is recorded as unmatched.

The table itself is ``seed_aliases.csv`` (an empty ``model_key`` is None, ``caveat`` is
``yes`` or empty). Where each source's spelling comes from: LiveBench, the ``model`` column
of table_2024_08_31.csv; BigCodeBench, the keys of results.json / results-hard.json;
LiveCodeBench, ``model_repr`` in performances_generation.json; Chatbot Arena, the CSV
``model`` column (the same spelling in all three files); EvalPlus, the keys of results.json.
"""

from __future__ import annotations

import csv
from pathlib import Path

_TABLE = Path(__file__).with_name("seed_aliases.csv")


def _load() -> tuple[tuple[str, str, str | None, str, bool], ...]:
    with _TABLE.open(newline="", encoding="utf-8") as handle:
        return tuple(
            (r["source"], r["name"], r["model_key"] or None, r["note"], r["caveat"] == "yes")
            for r in csv.DictReader(handle)
        )


SEED_ALIASES = _load()
