"""The demo catalogue: the models of the published Copilot Arena board (Jan 2025).

`strength` is the published rating (codestral-2405 anchored at 1000), used by
`simulate_battles` as the known truth; None for models not on that board.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DemoModel:
    key: str
    display_name: str
    organization: str
    license: str
    style: str
    strength: float | None


DEMO_MODELS: tuple[DemoModel, ...] = (
    DemoModel(
        "deepseek-coder-fim", "DeepSeek V2.5 (FiM)", "DeepSeek", "DeepSeek License", "fim", 1029.5
    ),
    DemoModel(
        "claude-3-5-sonnet-20240620",
        "Claude 3.5 Sonnet (June 2024)",
        "Anthropic",
        "Proprietary",
        "chat",
        1017.7,
    ),
    DemoModel(
        "codestral-2405",
        "Codestral 24.05",
        "Mistral AI",
        "Mistral Non-Production License",
        "fim",
        1000.2,
    ),
    DemoModel(
        "llama-3.1-405b-instruct",
        "Llama 3.1 405B Instruct",
        "Meta",
        "Llama 3.1 Community License",
        "chat",
        986.8,
    ),
    DemoModel("gemini-1.5-pro-002", "Gemini 1.5 Pro 002", "Google", "Proprietary", "chat", 982.4),
    DemoModel("gpt-4o-2024-08-06", "GPT-4o (Aug 2024)", "OpenAI", "Proprietary", "chat", 982.4),
    DemoModel(
        "gemini-1.5-flash-002", "Gemini 1.5 Flash 002", "Google", "Proprietary", "chat", 981.3
    ),
    DemoModel(
        "llama-3.1-70b-instruct",
        "Llama 3.1 70B Instruct",
        "Meta",
        "Llama 3.1 Community License",
        "chat",
        970.6,
    ),
    DemoModel("gpt-4o-2024-11-20", "GPT-4o (Nov 2024)", "OpenAI", "Proprietary", "chat", 965.9),
    DemoModel(
        "qwen-2.5-coder-32b-instruct",
        "Qwen2.5-Coder 32B Instruct",
        "Alibaba Qwen",
        "Apache-2.0",
        "chat",
        951.3,
    ),
    DemoModel(
        "gpt-4o-mini-2024-07-18", "GPT-4o mini (July 2024)", "OpenAI", "Proprietary", "chat", 940.7
    ),
    DemoModel(
        "claude-3-5-sonnet-20241022",
        "Claude 3.5 Sonnet (Oct 2024)",
        "Anthropic",
        "Proprietary",
        "chat",
        None,
    ),
)

PUBLISHED_STRENGTHS = {m.key: m.strength for m in DEMO_MODELS if m.strength is not None}
