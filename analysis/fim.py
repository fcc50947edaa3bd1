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

Clean-up of a chat answer (``clean_chat_completion``), in this order
    1. Cut everything up to and including the first ``<CODE>``.
    2. Unwrap a markdown fence: one at the start of the snippet (after ``<CODE>``) or, with
       no tag, the first fence line anywhere; any info string (``python``, ``tsx``, none);
       content ends at the first bare closing fence line, whose preceding newline is
       fence syntax. (The original knew 17 info strings, not a bare fence.)
    3. Truncate at the earliest stop word (the original took the first one *in list
       order* that occurs). ``<CODE>\n...\n</CODE>`` padding is formatting: when the
       snippet opened with a newline, one trailing newline is dropped. A newline right
       after ``<CODE>`` is left to step 4, which knows the cursor line.
    4. Remove the repeated prefix and suffix lines (overlap rule below).
    5. Keep at most ``max_lines`` lines. The original limited the *raw* answer to
       ``max_lines + 1`` lines before anything else, which let chatter, the fence line and
       the repeated lines eat the budget; here the limit applies to what is inserted.

Overlap rule (``strip_overlap``) -- the fix
    The original removed the longest end of the prefix that the output starts with and
    the longest start of the suffix that the output ends with, at *any* length, then also
    the longest common *end* of output and suffix. A one-character accidental match such
    as a shared ``)`` or ``;`` therefore deleted real code. Here an overlap is only
    removed in whole-line units anchored at the cursor's line:

    * Prefix side: the removed text must be the cursor line's text before the cursor
      (``P`` = the prefix after its last newline), optionally preceded by whole previous
      prefix lines, i.e. it starts at the start of a prefix line. ``P`` itself is always
      accepted: it includes the indentation, so matching it is no accident, and if ``P``
      is only indentation, removing it is right whether or not the model repeated it.
      Candidates spanning several lines must contain a non-whitespace character; when
      ``P`` is blank, blank lines just above it may be skipped (the model repeated the
      last non-blank line). A copy whose first line lost its indentation is accepted
      only with at least ``min_fragment_overlap`` non-whitespace characters.
      One newline right after ``<CODE>`` may precede the match. If nothing matches, that
      newline is dropped on a blank cursor line (it would only add an empty line) and
      kept after text on the cursor line (there it is a real line break).
    * Suffix side: the removed text must be the cursor line's text after the cursor
      (``S`` = the suffix up to its first newline), optionally followed by whole suffix
      lines, i.e. it ends at the end of a suffix line (trailing whitespace ignored); blank
      lines right after a blank ``S`` may be skipped. A candidate that crosses a line
      break and contains non-whitespace is accepted. ``S`` alone -- often just an
      auto-closed ``)``, ``")`` or ``});`` -- is accepted when the model demonstrably
      followed the format (a non-blank prefix-side overlap was removed); otherwise when
      removing it makes the document's cursor line more bracket-balanced than keeping it
      (``f(`` + ``g(x))`` + ``)`` versus ``f(`` + ``g(x)`` + ``)``); and, if brackets do
      not tell, when it has at least ``min_fragment_overlap`` (default 4) non-whitespace
      characters.
    * The longest accepted candidate wins on each side; prefix first, then the suffix
      on what remains. Matching ignores ``\r`` before ``\n``; the returned middle keeps
      the model's own line endings (the original converted them all to ``\n``).

    Known ambiguities (all measured in tests/analysis/test_fim.py on real completions):
    a middle that starts with a blank line on a blank cursor line loses it when glued to
    ``<CODE>``; a model that repeats the prefix line but not a short suffix fragment gets
    that fragment removed; a model that does not repeat a whitespace-only ``P`` but
    starts with the same whitespace loses it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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
    "OverlapResult",
    "build_chat_prompt",
    "clean_chat_completion",
    "estimate_tokens",
    "extract_snippet",
    "limit_lines",
    "native_fim_fields",
    "strip_overlap",
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
# How many blank lines between the cursor and the repeated non-blank line are skipped.
_MAX_BLANK_SKIP = 64


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


def trim_prefix(prefix: str, max_tokens: int = MAX_PREFIX_TOKENS) -> str:
    """The end of ``prefix`` within ``max_tokens`` estimated tokens, from a line start
    when that wastes at most a quarter of the budget."""
    budget = max(int(max_tokens), 0) * BYTES_PER_TOKEN
    data = _utf8(prefix)
    if len(data) <= budget:
        return prefix
    cut = len(data) - budget
    # A newline byte never occurs inside a multi-byte UTF-8 sequence, so searching bytes
    # for b"\n" finds real line boundaries.
    nl = data.find(b"\n", cut - 1) if cut > 0 else -1
    start = nl + 1 if nl != -1 and (nl + 1 - cut) <= _MAX_SNAP_LOSS * budget else cut
    start = _char_start(data, start)
    return data[start:].decode("utf-8", "surrogatepass")


def trim_suffix(suffix: str, max_tokens: int = MAX_SUFFIX_TOKENS) -> str:
    """The start of ``suffix`` within ``max_tokens`` estimated tokens, up to a line end
    when that wastes at most a quarter of the budget."""
    budget = max(int(max_tokens), 0) * BYTES_PER_TOKEN
    data = _utf8(suffix)
    if len(data) <= budget:
        return suffix
    nl = data.rfind(b"\n", 0, budget)
    end = nl + 1 if nl != -1 and (budget - nl - 1) <= _MAX_SNAP_LOSS * budget else budget
    end = _char_end(data, end)
    return data[:end].decode("utf-8", "surrogatepass")


def trim_context(
    prefix: str,
    suffix: str,
    *,
    max_prefix_tokens: int = MAX_PREFIX_TOKENS,
    max_suffix_tokens: int = MAX_SUFFIX_TOKENS,
) -> tuple[str, str]:
    """``(trim_prefix(prefix), trim_suffix(suffix))`` with the original 6,144/2,048 budget."""
    return trim_prefix(prefix, max_prefix_tokens), trim_suffix(suffix, max_suffix_tokens)


# ----------------------------------------------------------------------- clean-up

# An opening fence line: ``` plus an optional info string (python, c++, tsx, ...).
_FENCE_OPEN = re.compile(r"^[ \t]*```[^\s`]*[ \t]*\r?\n", re.MULTILINE)
_FENCE_CLOSE = re.compile(r"^[ \t]*```[ \t]*\r?$", re.MULTILINE)


def _drop_one_newline_end(text: str) -> str:
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


def _extract(raw: str, stop: Sequence[str]) -> tuple[str, bool]:
    """The snippet and whether a newline at its start may be formatting (see strip_overlap)."""
    text = raw
    start = text.find(CODE_START)
    tagged = start != -1
    padded = False
    if tagged:
        # The newline after the tag stays: strip_overlap decides whether it is formatting,
        # since that depends on the cursor line.
        text = text[start + len(CODE_START) :]
        padded = text.startswith(("\n", "\r\n"))
    # After a tag only a fence that opens the snippet is a wrapper; a fence further down
    # is code (markdown files, docstrings). Without a tag, chatter may precede it.
    if tagged:
        lead = len(text) - len(text.lstrip())
        opening = _FENCE_OPEN.match(text[lead:])
        offset = lead
    else:
        opening = _FENCE_OPEN.search(text)
        offset = 0
    if opening is not None:
        text = text[offset + opening.end() :]
        closing = _FENCE_CLOSE.search(text)
        if closing is not None:
            # The newline before the closing fence is part of the fence syntax.
            text = _drop_one_newline_end(text[: closing.start()])
    cut = min((i for i in (text.find(w) for w in stop if w) if i != -1), default=-1)
    if cut != -1:
        text = text[:cut]
    fenced = opening is not None
    # "<CODE>\n...\n</CODE>": padding on both sides is formatting. A newline only before
    # the end tag is kept (it may be code); strip_overlap ignores it when matching.
    if padded and not fenced:
        text = _drop_one_newline_end(text)
    return text, padded and not fenced


def extract_snippet(raw: str, *, stop: Sequence[str] = STOP_WORDS) -> str:
    """Steps 1-3 of the clean-up: the snippet inside ``<CODE>``/fences, cut at stop words.

    A newline right after ``<CODE>`` is kept; ``strip_overlap`` decides about it.
    """
    return _extract(raw, stop)[0]


@dataclass(frozen=True)
class OverlapResult:
    """The insertable middle and the two pieces removed from the snippet's ends."""

    middle: str
    prefix_overlap: str
    suffix_overlap: str


def _normalise(text: str) -> tuple[str, list[int]]:
    """``text`` with CRLF -> LF and, for each normalised index, the original index."""
    if "\r\n" not in text:
        return text, list(range(len(text) + 1))
    out: list[str] = []
    pos: list[int] = []
    i = 0
    n = len(text)
    while i < n:
        if text[i] == "\r" and i + 1 < n and text[i + 1] == "\n":
            i += 1  # the LF stands for the CRLF pair; cutting before it cuts before CR
            out.append("\n")
            pos.append(i - 1)
        else:
            out.append(text[i])
            pos.append(i)
        i += 1
    pos.append(n)
    return "".join(out), pos


def _nonspace(text: str) -> int:
    return sum(1 for ch in text if not ch.isspace())


def _tail_lines(text: str, count: int) -> list[str]:
    """The last ``count`` + 1 lines of ``text`` (fewer if it has fewer), CR-stripped."""
    parts = text.rsplit("\n", count)
    if len(parts) > count:
        parts = parts[1:]  # the first part is everything before, not one line
    return [p.removesuffix("\r") for p in parts]


def _head_lines(text: str, count: int) -> list[str]:
    parts = text.split("\n", count)
    if len(parts) > count:
        parts = parts[:-1]
    return [p.removesuffix("\r") for p in parts]


def _blank(line: str) -> bool:
    return not line.strip()


def _prefix_candidates(lines: list[str], min_fragment: int, limit: int) -> list[str]:
    """Texts ending at the cursor that start at a prefix line start (see docstring),
    no longer than ``limit`` characters."""
    last = lines[-1]
    cands: list[str] = []
    if last:
        cands.append(last)
    stripped = last.lstrip()
    if stripped != last and _nonspace(stripped) >= min_fragment:
        cands.append(stripped)
    # Whole earlier lines: exactly as in the prefix, and (for a blank cursor line) with the
    # blank lines just above skipped, since the model repeats the last non-blank line.
    bodies = [lines[:-1]]
    if _blank(last):
        skip = 0
        while skip < len(lines) - 1 and _blank(lines[-2 - skip]):
            skip += 1
        if skip:
            bodies.append(lines[: len(lines) - 1 - skip])
    for body in bodies:
        size = len(last)
        for k in range(1, len(body) + 1):
            block = body[-k:]
            size += len(block[0]) + 1
            if size - (len(block[0]) - len(block[0].lstrip())) > limit:
                break
            if not any(not _blank(b) for b in block):
                continue
            joined = "\n".join(block) + "\n" + last
            cands.append(joined)
            first = block[0].lstrip()
            if first != block[0] and _nonspace(first) >= min_fragment:
                cands.append("\n".join([first, *block[1:]]) + "\n" + last)
    return cands


def _suffix_candidates(lines: list[str], limit: int) -> list[str]:
    """Texts starting at the cursor that cross at least one suffix line break and end at
    a suffix line end (see docstring), no longer than ``limit`` characters."""
    first = lines[0]
    head = "" if _blank(first) else first
    bodies = [lines[1:]]
    if _blank(first):
        skip = 0
        while skip < len(lines) - 1 and _blank(lines[1 + skip]):
            skip += 1
        if skip:
            bodies.append(lines[1 + skip :])
    cands: list[str] = []
    for body in bodies:
        size = len(head)
        for j in range(1, len(body) + 1):
            block = body[:j]
            size += len(block[-1]) + 1
            if size - (len(block[-1]) - len(block[-1].rstrip())) > limit:
                break
            if any(not _blank(b) for b in block):
                cands.append(head + "\n" + "\n".join(block))
    return cands


_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = frozenset(_OPENERS.values())


def _unbalanced(line: str) -> int:
    """Unmatched brackets in one line: stray closers plus unclosed openers (naive: string
    literals are not skipped; used only to compare two versions of the same line)."""
    stack: list[str] = []
    stray = 0
    for ch in line:
        if ch in _OPENERS:
            stack.append(_OPENERS[ch])
        elif ch in _CLOSERS:
            if stack and stack[-1] == ch:
                stack.pop()
            else:
                stray += 1
    return stray + len(stack)


def _remove_fragment(
    cursor_head: str, kept: str, dropped: str, fragment: str, *, min_fragment: int, evidence: bool
) -> bool:
    """Whether to remove a repeated suffix fragment (the rest of the cursor line).

    A model that repeated the prefix line followed the format, so it repeated the fragment
    too. Otherwise compare the cursor line the document would get with the fragment
    removed from the snippet (``kept``) or left in it (``kept + dropped``): when the
    brackets differ they decide (a repeated auto-closed ``)`` versus a nested one), else a
    long fragment is removed and a short one kept.
    """
    if evidence:
        return True

    def doc_line(middle: str) -> str:
        last = middle.rsplit("\n", 1)
        return (cursor_head if len(last) == 1 else "") + last[-1] + fragment

    removed = _unbalanced(doc_line(kept))
    left = _unbalanced(doc_line(kept + dropped))
    if removed != left:
        return removed < left
    return _nonspace(fragment) >= min_fragment


def strip_overlap(
    snippet: str,
    *,
    prefix: str,
    suffix: str,
    min_fragment_overlap: int = MIN_FRAGMENT_OVERLAP,
    optional_leading_newline: bool = True,
) -> OverlapResult:
    """Remove the repeated prefix/suffix lines from a snippet (rule in module docstring).

    ``optional_leading_newline``: the snippet may start with one formatting newline (as
    after ``<CODE>``); pass False for text that cannot carry one (unwrapped fences).
    """
    norm, pos = _normalise(snippet)
    nlines = norm.count("\n") + 1
    window = nlines + _MAX_BLANK_SKIP

    plines = _tail_lines(prefix, window)
    cursor_head = plines[-1]
    # One newline right after <CODE> may be formatting: candidates may follow it.
    lead = 1 if optional_leading_newline and norm.startswith("\n") else 0
    start = 0
    evidence = False
    for cand in sorted(
        _prefix_candidates(plines, min_fragment_overlap, len(norm)), key=len, reverse=True
    ):
        if norm.startswith(cand):
            start = len(cand)
        elif lead and norm.startswith(cand, 1):
            start = 1 + len(cand)
        else:
            continue
        evidence = not _blank(cand)
        break
    else:
        # On a blank cursor line a leading newline only adds an empty line; after text on
        # the cursor line it is a real line break and stays.
        if lead and _blank(cursor_head):
            start = 1

    rest = norm[start:]
    end = len(norm)
    if rest.strip() and suffix:
        slines = _head_lines(suffix, window)
        first = slines[0]
        trimmed = rest.rstrip()
        # Trailing whitespace is ignored on both sides: models drop trailing spaces and
        # add a final newline freely; whatever follows the match goes with the overlap.
        cands = {c.rstrip() for c in _suffix_candidates(slines, len(rest) + 1)}
        for cand in sorted(cands, key=lambda c: (-len(c), c)):
            if trimmed.endswith(cand):
                end = start + len(trimmed) - len(cand)
                break
            if cand[1:] == trimmed and cand.startswith("\n"):
                # The whole rest is the next line(s): nothing new to insert.
                end = start
                break
        else:
            frag = first.rstrip()
            if frag.strip() and trimmed.endswith(frag):
                cut = len(trimmed) - len(frag)
                if _remove_fragment(
                    cursor_head,
                    rest[:cut],
                    rest[cut:],
                    first,
                    min_fragment=min_fragment_overlap,
                    evidence=evidence,
                ):
                    end = start + cut
            elif first and _blank(first) and rest.endswith(first):
                # Whitespace-only rest of the cursor line repeated verbatim.
                end = len(norm) - len(first)

    lo, hi = pos[start], pos[end]
    return OverlapResult(
        middle=snippet[lo:hi], prefix_overlap=snippet[:lo], suffix_overlap=snippet[hi:]
    )


def limit_lines(text: str, max_lines: int | None) -> str:
    """At most ``max_lines`` lines of ``text`` (``None``: no limit)."""
    if max_lines is None:
        return text
    if max_lines <= 0:
        return ""
    idx = -1
    for _ in range(max_lines):
        idx = text.find("\n", idx + 1)
        if idx == -1:
            return text
    return _drop_one_newline_end(text[: idx + 1])


def clean_chat_completion(
    raw: str,
    *,
    prefix: str,
    suffix: str,
    max_lines: int | None = None,
    stop: Sequence[str] = STOP_WORDS,
    min_fragment_overlap: int = MIN_FRAGMENT_OVERLAP,
) -> str:
    """Turn a chat model's raw answer into the text to insert at the cursor.

    ``prefix``/``suffix`` are the texts the prompt was built from (trimmed or not: only
    their lines next to the cursor matter). Steps and overlap rule: module docstring.
    """
    snippet, padded = _extract(raw, stop)
    middle = strip_overlap(
        snippet,
        prefix=prefix,
        suffix=suffix,
        min_fragment_overlap=min_fragment_overlap,
        optional_leading_newline=padded,
    ).middle
    return limit_lines(middle, max_lines)
