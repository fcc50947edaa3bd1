"""What each provider kind is asked, and how its answer becomes insertable text.

Completions (``/create_pair``)
    Chat providers get ``analysis.fim.build_chat_prompt`` (the file split at the cursor, a
    ``<CODE>`` snippet repeating the cursor's prefix and suffix lines) and their answer goes
    through ``analysis.fim_cleanup.clean_chat_completion``. Native FiM providers get the prefix and
    suffix directly, stop at a blank line like the original arena's Codestral and DeepSeek
    templates did, and their answer is only cut at the stop words and to ``maxLines``.

Edits (``/create_edit_pair``, chat providers only)
    The model gets the text before and after the selection, the selection and the
    instruction, and answers with the rewritten selection in ``<CODE>``...``</CODE>``; the
    snippet is extracted like a completion's (tags, markdown fence, stop words) and one
    formatting newline after ``<CODE>`` is dropped. Edits are not cut to ``maxLines``: the
    answer replaces whole lines and a truncated rewrite would be broken code (the original
    server ignored the client's value too); ``max_tokens`` bounds it.

Context is trimmed before any of this with ``analysis.fim.trim_context`` (last 6,144
estimated tokens of the prefix, first 2,048 of the suffix).
"""

from __future__ import annotations

from analysis.fim import (
    CODE_END,
    CODE_START,
    PREFIX_END,
    PREFIX_START,
    STOP_WORDS,
    SUFFIX_END,
    SUFFIX_START,
    build_chat_prompt,
    native_fim_fields,
)
from analysis.fim_cleanup import clean_chat_completion, extract_snippet, limit_lines

from .providers import Prompt

# Native FiM models stop at the end of a paragraph (the original's Codestral/DeepSeek stops).
NATIVE_FIM_STOP: tuple[str, ...] = ("\n\n", "\n \n")
SELECTION_START = "<SELECTION>"
SELECTION_END = "</SELECTION>"
EDIT_STOP: tuple[str, ...] = (CODE_END,)

_EDIT_SYSTEM = f"""\
You edit code in a developer's editor. You receive the text before a selected section \
between {PREFIX_START} and {PREFIX_END}, the selected section between {SELECTION_START} and \
{SELECTION_END} (it may be empty: then write new code for that spot), the text after it \
between {SUFFIX_START} and {SUFFIX_END}, and an instruction.

Rewrite the selected section so that it follows the instruction. Your answer replaces the \
whole selection, so repeat its unchanged lines too, and keep the file's language, \
indentation and style. Reply with exactly one snippet between {CODE_START} and {CODE_END} \
and nothing else: no explanation, no markdown fences."""


def completion_prompt(*, chat: bool, prefix: str, suffix: str) -> Prompt:
    """The request for one completion (prefix and suffix already trimmed)."""
    if chat:
        built = build_chat_prompt(prefix, suffix)
        return Prompt(messages=tuple(built.messages), stop=tuple(built.stop))
    fields = native_fim_fields(prefix, suffix)
    return Prompt(prefix=fields["prompt"], suffix=fields["suffix"], stop=NATIVE_FIM_STOP)


def edit_prompt(
    *, prefix: str, suffix: str, code_to_edit: str, user_input: str, language: str
) -> Prompt:
    head = f"Language: {language}\n" if language else ""
    user = (
        f"{head}{PREFIX_START}{prefix}{PREFIX_END}\n"
        f"{SELECTION_START}{code_to_edit}{SELECTION_END}\n"
        f"{SUFFIX_START}{suffix}{SUFFIX_END}\n"
        f"Instruction: {user_input}"
    )
    return Prompt(
        messages=({"role": "system", "content": _EDIT_SYSTEM}, {"role": "user", "content": user}),
        stop=EDIT_STOP,
    )


def prompt_text(prompt: Prompt) -> str:
    """The item's ``prompt`` field: the user message for chat models (the system message
    is fixed in code), the prefix for native FiM models (the suffix is in ``suffix``)."""
    if prompt.messages:
        return prompt.messages[-1]["content"]
    return prompt.prefix


def _cut_at_stop(text: str, stop: tuple[str, ...]) -> str:
    cut = min((i for i in (text.find(w) for w in stop if w) if i != -1), default=-1)
    return text if cut == -1 else text[:cut]


def clean_completion(
    raw: str, *, chat: bool, prefix: str, suffix: str, max_lines: int | None
) -> str:
    """The text to insert at the cursor."""
    if chat:
        return clean_chat_completion(
            raw, prefix=prefix, suffix=suffix, max_lines=max_lines, stop=STOP_WORDS
        )
    # Servers apply `stop` themselves, but not all honour every entry; cutting again is free.
    return limit_lines(_cut_at_stop(raw, NATIVE_FIM_STOP), max_lines)


def clean_edit(raw: str) -> str:
    """The rewritten selection from a chat answer."""
    text = extract_snippet(raw, stop=EDIT_STOP)
    # "<CODE>\n...": the newline after the tag is formatting (a rewrite never starts with
    # a line break the selection did not have; the extension replaces whole lines).
    if raw.find(CODE_START) != -1:
        if text.startswith("\r\n"):
            text = text[2:]
        elif text.startswith("\n"):
            text = text[1:]
    return text
