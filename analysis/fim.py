"""Fill-in-the-middle (FiM) for the arena: prompts, context trimming and answer clean-up.

Inputs are the editor's text before the cursor (``prefix``) and after it (``suffix``) and,
for chat models, the model's raw answer. Outputs are plain data: chat messages and stop
words, payload fields for native FiM models, trimmed context, the insertable middle.

Chat models (``build_chat_prompt``)
    The model gets the file split at the cursor between ``<PREFIX>``/``</PREFIX>`` and
    ``<SUFFIX>``/``</SUFFIX>`` and must answer with one snippet in ``<CODE>``...``</CODE>``
    that *starts by repeating the last line of the prefix* and *ends by repeating the first
    line of the suffix* (for a blank line: the nearest non-blank one). Writing whole lines
    is natural for chat models; the repeated lines are removed afterwards. Stop words are
    the end tag and the prefix/suffix tags, most important first, because the OpenAI chat
    API accepts at most four (``stop[:4]``); ``clean_chat_completion`` cuts at all of them.
    Native FiM models (Codestral, DeepSeek FiM) take the two halves directly
    (``native_fim_fields``).

Token budget (``estimate_tokens``, ``trim_context``)
    No tokenizer is downloaded. A token is estimated as 4 bytes of UTF-8: OpenAI's rule of
    thumb is ~4 characters of English per token, and counting bytes instead of characters
    keeps CJK comments (3 bytes per character, ~1 token each) from being undercounted 3x.
    It is O(1) for ASCII text (``str.isascii`` plus ``len``) and one ``encode`` otherwise.
    It has not been calibrated against a real BPE here; code with much short punctuation
    can run ~10-30% above the estimate, which only matters for the budget's margin.
    ``trim_context`` keeps the last 6,144 tokens of the prefix and the first 2,048 of the
    suffix (the original server's budget), cutting on line boundaries unless the nearest
    boundary would waste more than a quarter of the budget (one huge minified line), in
    which case it cuts mid-line on a character boundary.

Clean-up of a chat answer (``clean_chat_completion``, the overlap rule): ``analysis.fim_cleanup``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "CODE_END",
    "CODE_START",
    "MAX_PREFIX_TOKENS",
    "MAX_SUFFIX_TOKENS",
    "MIN_FRAGMENT_OVERLAP",
    "PREFIX_END",
    "PREFIX_START",
    "STOP_WORDS",
    "SUFFIX_END",
    "SUFFIX_START",
    "ChatFimPrompt",
    "build_chat_prompt",
    "estimate_tokens",
    "native_fim_fields",
    "trim_context",
    "trim_prefix",
    "trim_suffix",
]

CODE_START = "<CODE>"
CODE_END = "</CODE>"
PREFIX_START = "<PREFIX>"
PREFIX_END = "</PREFIX>"
SUFFIX_START = "<SUFFIX>"
SUFFIX_END = "</SUFFIX>"
# Most important first: the end tag stops the answer; an opening <SUFFIX>/<PREFIX> means
# the model started echoing the input.
STOP_WORDS: tuple[str, ...] = (CODE_END, SUFFIX_START, PREFIX_START, SUFFIX_END, PREFIX_END)

MAX_PREFIX_TOKENS = 6144
MAX_SUFFIX_TOKENS = 2048
BYTES_PER_TOKEN = 4
# Line-boundary trimming may give up at most this fraction of the budget.
_MAX_SNAP_LOSS = 0.25
MIN_FRAGMENT_OVERLAP = 4


# --------------------------------------------------------------------------- prompts

_SYSTEM = """\
You complete code in a developer's editor. You receive the file split at the cursor: the \
text before the cursor between <PREFIX> and </PREFIX>, the text after it between <SUFFIX> \
and </SUFFIX>. Write the code that belongs at the cursor.

Answer format:
- Reply with exactly one snippet between <CODE> and </CODE> and nothing else: no \
explanation, no markdown fences.
- Begin the snippet with an exact copy of the last line of the prefix, indentation \
included. If that line is blank, copy the last non-blank line of the prefix instead.
- End the snippet with an exact copy of the first line of the suffix. If that line is \
blank, copy the first non-blank line of the suffix instead; if the suffix is empty, just \
stop.
- In between, write only the new code, in the file's language and indentation style.
- If nothing should be inserted, reply with just those two copied lines.

Example 1
<PREFIX>def mean(values):
    if not values:
        return 0.0
    total = sum(</PREFIX>
<SUFFIX>
    return total / len(values)</SUFFIX>
Answer:
<CODE>    total = sum(values)
    return total / len(values)</CODE>

Example 2
<PREFIX>function clamp(x, lo, hi) {
  return Math.min(</PREFIX>
<SUFFIX>, hi);
}</SUFFIX>
Answer:
<CODE>  return Math.min(Math.max(x, lo), hi);</CODE>"""


@dataclass
class ChatFimPrompt:
    """Chat messages (``[{"role", "content"}, ...]``) and stop words for one request."""

    messages: list[dict[str, str]]
    stop: list[str] = field(default_factory=lambda: list(STOP_WORDS))


def build_chat_prompt(prefix: str, suffix: str, *, language: str | None = None) -> ChatFimPrompt:
    """System + user messages asking a chat model for a ``<CODE>`` snippet (see docstring).

    ``language`` is the editor's language id (``fileType``); it is only a hint.
    Trim the context first (``trim_context``); this function inserts it verbatim.
    """
    head = f"Language: {language}\n" if language else ""
    user = f"{head}{PREFIX_START}{prefix}{PREFIX_END}\n{SUFFIX_START}{suffix}{SUFFIX_END}"
    return ChatFimPrompt(
        messages=[{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}]
    )


def native_fim_fields(prefix: str, suffix: str) -> dict[str, str]:
    """Request fields for native FiM endpoints (Mistral ``/v1/fim/completions``, DeepSeek
    beta ``/completions``): both name the text before the cursor ``prompt``."""
    return {"prompt": prefix, "suffix": suffix}


# ----------------------------------------------------------------------- token budget


def _utf8(text: str) -> bytes:
    # surrogatepass: JSON can carry lone surrogates; they must not crash a request.
    return text.encode("utf-8", "surrogatepass")


def estimate_tokens(text: str) -> int:
    """Estimated token count: ``ceil(utf8_bytes / 4)`` (see module docstring)."""
    n = len(text) if text.isascii() else len(_utf8(text))
    return -(-n // BYTES_PER_TOKEN)


def _char_start(data: bytes, i: int) -> int:
    # Move forward off UTF-8 continuation bytes so a cut never splits a character.
    while i < len(data) and (data[i] & 0xC0) == 0x80:
        i += 1
    return i


def _char_end(data: bytes, i: int) -> int:
    while 0 < i < len(data) and (data[i] & 0xC0) == 0x80:
        i -= 1
    return i


def _trim(text: str, max_tokens: int, *, keep_end: bool) -> str:
    """``text`` within ``max_tokens`` estimated tokens: its end (``keep_end``) from a line
    start, or its start up to a line end, when that wastes at most a quarter of the budget."""
    budget = max(int(max_tokens), 0) * BYTES_PER_TOKEN
    data = _utf8(text)
    if len(data) <= budget:
        return text
    # A newline byte never occurs inside a multi-byte UTF-8 sequence, so searching bytes
    # for b"\n" finds real line boundaries.
    if keep_end:
        cut = len(data) - budget
        nl = data.find(b"\n", cut - 1) if cut > 0 else -1
        start = nl + 1 if nl != -1 and (nl + 1 - cut) <= _MAX_SNAP_LOSS * budget else cut
        return data[_char_start(data, start) :].decode("utf-8", "surrogatepass")
    nl = data.rfind(b"\n", 0, budget)
    end = nl + 1 if nl != -1 and (budget - nl - 1) <= _MAX_SNAP_LOSS * budget else budget
    return data[: _char_end(data, end)].decode("utf-8", "surrogatepass")


def trim_prefix(prefix: str, max_tokens: int = MAX_PREFIX_TOKENS) -> str:
    """The end of ``prefix`` within ``max_tokens`` estimated tokens, from a line start
    when that wastes at most a quarter of the budget."""
    return _trim(prefix, max_tokens, keep_end=True)


def trim_suffix(suffix: str, max_tokens: int = MAX_SUFFIX_TOKENS) -> str:
    """The start of ``suffix`` within ``max_tokens`` estimated tokens, up to a line end
    when that wastes at most a quarter of the budget."""
    return _trim(suffix, max_tokens, keep_end=False)


def trim_context(
    prefix: str,
    suffix: str,
    *,
    max_prefix_tokens: int = MAX_PREFIX_TOKENS,
    max_suffix_tokens: int = MAX_SUFFIX_TOKENS,
) -> tuple[str, str]:
    """``(trim_prefix(prefix), trim_suffix(suffix))`` with the original 6,144/2,048 budget."""
    return trim_prefix(prefix, max_prefix_tokens), trim_suffix(suffix, max_suffix_tokens)
