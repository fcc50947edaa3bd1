"""Prompts per provider kind and the clean-up of their answers (pure functions)."""

from __future__ import annotations

import pytest

from serving.prompts import (
    NATIVE_FIM_STOP,
    clean_completion,
    clean_edit,
    completion_prompt,
    edit_prompt,
    prompt_text,
)
from serving.providers import Generation, ProviderConfig, request_body


def test_chat_prompt_and_its_clean_up():
    prompt = completion_prompt(chat=True, prefix="def f(x):\n    return ", suffix="\n\nf(1)\n")
    assert prompt.stop[0] == "</CODE>"
    assert "<PREFIX>def f(x):\n    return </PREFIX>" in prompt_text(prompt)
    raw = "Sure!\n<CODE>    return x + 1\nf(1)</CODE> hope this helps"
    assert (
        clean_completion(
            raw, chat=True, prefix="def f(x):\n    return ", suffix="\n\nf(1)\n", max_lines=5
        )
        == "x + 1"
    )


def test_native_fim_answer_is_cut_at_a_blank_line_and_to_max_lines():
    prompt = completion_prompt(chat=False, prefix="a = ", suffix="\n")
    assert (prompt.prefix, prompt.suffix, prompt.stop) == ("a = ", "\n", NATIVE_FIM_STOP)
    assert prompt_text(prompt) == "a = "
    assert (
        clean_completion("1\nb = 2\n\nc = 3", chat=False, prefix="", suffix="", max_lines=5)
        == "1\nb = 2"
    )
    assert (
        clean_completion("1\nb = 2\nc = 3", chat=False, prefix="", suffix="", max_lines=2)
        == "1\nb = 2"
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("<CODE>\n    return sum(xs)\n</CODE>", "    return sum(xs)"),
        ("<CODE>    return sum(xs)</CODE>", "    return sum(xs)"),
        ("Here:\n```python\n    return sum(xs)\n```\nDone.", "    return sum(xs)"),
        ("<CODE>\n```python\n    return sum(xs)\n```\n</CODE>", "    return sum(xs)"),
        ("    return sum(xs)", "    return sum(xs)"),
    ],
)
def test_edit_answers(raw, expected):
    assert clean_edit(raw) == expected


def test_edit_prompt_carries_selection_and_instruction():
    prompt = edit_prompt(
        prefix="def t(xs):\n",
        suffix="\n",
        code_to_edit="    pass",
        user_input="sum them",
        language="python",
    )
    text = prompt_text(prompt)
    assert text.startswith("Language: python\n")
    assert "<SELECTION>    pass</SELECTION>" in text and text.endswith("Instruction: sum them")
    assert prompt.stop == ("</CODE>",)


@pytest.mark.parametrize(
    ("kind", "route_fields"),
    [
        ("openai_chat", {"messages"}),
        ("openai_completion", {"prompt", "suffix"}),
        ("mistral_fim", {"prompt", "suffix"}),
    ],
)
def test_request_bodies(kind, route_fields):
    config = ProviderConfig(provider_id=1, kind=kind, base_url="http://h/v1", remote_model="m")
    prompt = completion_prompt(chat=kind == "openai_chat", prefix="p", suffix="s")
    body = request_body(config, prompt, Generation(max_tokens=7, temperature=0.1, top_p=0.5))
    common = {"model", "max_tokens", "temperature", "top_p", "stream", "stop"}
    assert set(body) == common | route_fields
    assert (body["model"], body["max_tokens"], body["stream"]) == ("m", 7, False)
    assert len(body["stop"]) <= 4 or kind != "openai_chat"
