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
"""

from __future__ import annotations

DEEPSEEK_NOTE = (
    "Assumption: Copilot Arena's deepseek-coder-fim was DeepSeek V2.5 behind the FiM endpoint; "
    "it became V2.5-1210 on 2024-12-10 and V3 on 2024-12-26, and battle dates are not in the "
    "sample, so part of the battles may be a later checkpoint."
)
CODESTRAL_NOTE = (
    "Codestral-22B-v0.1 is the open-weight May 2024 release, taken to be the same model as the "
    "codestral-2405 API."
)

SEED_ALIASES: tuple[tuple[str, str, str | None, str, bool], ...] = (
    # LiveBench table_2024_08_31.csv `model` column.
    ("livebench", "gpt-4o-2024-08-06", "gpt-4o-2024-08-06", "", False),
    ("livebench", "gpt-4o-2024-11-20", "gpt-4o-2024-11-20", "", False),
    ("livebench", "gpt-4o-mini-2024-07-18", "gpt-4o-mini-2024-07-18", "", False),
    ("livebench", "claude-3-5-sonnet-20240620", "claude-3-5-sonnet-20240620", "", False),
    ("livebench", "claude-3-5-sonnet-20241022", "claude-3-5-sonnet-20241022", "", False),
    ("livebench", "gemini-1.5-pro-002", "gemini-1.5-pro-002", "", False),
    ("livebench", "gemini-1.5-flash-002", "gemini-1.5-flash-002", "", False),
    (
        "livebench",
        "meta-llama-3.1-405b-instruct-turbo",
        "llama-3.1-405b-instruct",
        "LiveBench scored Together's -turbo endpoint.",
        False,
    ),
    (
        "livebench",
        "meta-llama-3.1-70b-instruct-turbo",
        "llama-3.1-70b-instruct",
        "LiveBench scored Together's -turbo endpoint.",
        False,
    ),
    ("livebench", "qwen2.5-coder-32b-instruct", "qwen-2.5-coder-32b-instruct", "", False),
    ("livebench", "deepseek-v2.5", "deepseek-coder-fim", DEEPSEEK_NOTE, True),
    # BigCodeBench results.json / results-hard.json keys.
    (
        "bigcodebench",
        "GPT-4o-2024-08-06",
        "gpt-4o-2024-08-06",
        "Full set: null (Hard only).",
        False,
    ),
    ("bigcodebench", "GPT-4o-2024-11-20", "gpt-4o-2024-11-20", "", False),
    ("bigcodebench", "GPT-4o-mini-2024-07-18", "gpt-4o-mini-2024-07-18", "", False),
    ("bigcodebench", "Claude-3.5-Sonnet-20240620", "claude-3-5-sonnet-20240620", "", False),
    ("bigcodebench", "Claude-3.5-Sonnet-20241022", "claude-3-5-sonnet-20241022", "", False),
    (
        "bigcodebench",
        "Gemini-1.5-Pro-002",
        "gemini-1.5-pro-002",
        "Full set: null (Hard only).",
        False,
    ),
    (
        "bigcodebench",
        "Llama-3.1-405B-Instruct",
        "llama-3.1-405b-instruct",
        "Full set: null (Hard only).",
        False,
    ),
    ("bigcodebench", "Llama-3.1-70B-Instruct", "llama-3.1-70b-instruct", "", False),
    ("bigcodebench", "Qwen2.5-Coder-32B-Instruct", "qwen-2.5-coder-32b-instruct", "", False),
    ("bigcodebench", "DeepSeek-V2.5", "deepseek-coder-fim", DEEPSEEK_NOTE, True),
    ("bigcodebench", "DeepSeek-V2.5-1210", None, "Later refresh of V2.5; not mapped.", False),
    ("bigcodebench", "Codestral-22B-v0.1", "codestral-2405", CODESTRAL_NOTE, True),
    # LiveCodeBench performances_generation.json `model_repr`.
    ("livecodebench", "GPT-4O-2024-08-06", "gpt-4o-2024-08-06", "", False),
    ("livecodebench", "GPT-4O-mini-2024-07-18", "gpt-4o-mini-2024-07-18", "", False),
    ("livecodebench", "Claude-3.5-Sonnet-20240620", "claude-3-5-sonnet-20240620", "", False),
    ("livecodebench", "Claude-3.5-Sonnet-20241022", "claude-3-5-sonnet-20241022", "", False),
    ("livecodebench", "Gemini-Pro-1.5-002", "gemini-1.5-pro-002", "", False),
    ("livecodebench", "Gemini-Flash-1.5-002", "gemini-1.5-flash-002", "", False),
    (
        "livecodebench",
        "Codestral-Latest",
        None,
        "Mistral's moving alias `codestral-latest`; the checkpoint may be codestral-2501 "
        "(Jan 2025), so it is not matched to codestral-2405 by default.",
        False,
    ),
    ("livecodebench", "DeepSeek-V3", None, "DeepSeek V3, not V2.5; not mapped.", False),
    # Chatbot Arena CSV `model` column (same spelling in all three files).
    ("chatbot_arena", "GPT-4o-2024-08-06", "gpt-4o-2024-08-06", "", False),
    ("chatbot_arena", "GPT-4o-mini-2024-07-18", "gpt-4o-mini-2024-07-18", "", False),
    ("chatbot_arena", "Claude 3.5 Sonnet (20240620)", "claude-3-5-sonnet-20240620", "", False),
    ("chatbot_arena", "Claude 3.5 Sonnet (20241022)", "claude-3-5-sonnet-20241022", "", False),
    ("chatbot_arena", "Gemini-1.5-Pro-002", "gemini-1.5-pro-002", "", False),
    ("chatbot_arena", "Gemini-1.5-Flash-002", "gemini-1.5-flash-002", "", False),
    (
        "chatbot_arena",
        "Meta-Llama-3.1-405B-Instruct-bf16",
        "llama-3.1-405b-instruct",
        "The bf16 row of two near-identical ones (bf16, fp8).",
        False,
    ),
    (
        "chatbot_arena",
        "Meta-Llama-3.1-405B-Instruct-fp8",
        None,
        "Duplicate of the bf16 row; the bf16 one is used.",
        False,
    ),
    ("chatbot_arena", "Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b-instruct", "", False),
    ("chatbot_arena", "Qwen2.5-Coder-32B-Instruct", "qwen-2.5-coder-32b-instruct", "", False),
    ("chatbot_arena", "Deepseek-v2.5", "deepseek-coder-fim", DEEPSEEK_NOTE, True),
    ("chatbot_arena", "Deepseek-v2.5-1210", None, "Later refresh of V2.5; not mapped.", False),
    (
        "chatbot_arena",
        "ChatGPT-4o-latest (2024-11-20)",
        None,
        "The ChatGPT endpoint, not the gpt-4o-2024-11-20 API model.",
        False,
    ),
    # EvalPlus results.json keys.
    ("evalplus", "GPT 4o (Aug 2024)", "gpt-4o-2024-08-06", "", False),
    ("evalplus", "GPT 4o Mini (July 2024)", "gpt-4o-mini-2024-07-18", "", False),
    (
        "evalplus",
        "Claude Sonnet 3.5 (June 2024)",
        "claude-3-5-sonnet-20240620",
        "The source's link for this row points to an OpenAI page (a quirk kept as is).",
        False,
    ),
    ("evalplus", "Gemini 1.5 Pro 002", "gemini-1.5-pro-002", "", False),
    ("evalplus", "Gemini 1.5 Flash 002", "gemini-1.5-flash-002", "", False),
    ("evalplus", "Qwen2.5-Coder-32B-Instruct", "qwen-2.5-coder-32b-instruct", "", False),
    ("evalplus", "DeepSeek-V2.5 (Nov 2024)", "deepseek-coder-fim", DEEPSEEK_NOTE, True),
    ("evalplus", "Codestral-22B-v0.1", "codestral-2405", CODESTRAL_NOTE, True),
)
