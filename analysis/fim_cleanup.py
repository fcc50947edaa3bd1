"""Clean-up of a chat model's fill-in-the-middle answer: the insertable middle.

The prompt format and its tags are ``analysis.fim``'s; this module turns the model's raw
answer into the text inserted at the cursor. Longer than most modules, on purpose: much of it
is this statement of the rules, and the steps share the overlap rule's helpers.

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
from dataclasses import dataclass

from analysis.fim import CODE_START, MIN_FRAGMENT_OVERLAP, STOP_WORDS

# How many blank lines between the cursor and the repeated non-blank line are skipped.
_MAX_BLANK_SKIP = 64

__all__ = [
    "OverlapResult",
    "clean_chat_completion",
    "extract_snippet",
    "limit_lines",
    "strip_overlap",
]

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


def _leading_blanks(lines: Sequence[str]) -> int:
    """How many of ``lines``, from the first on, are blank."""
    count = 0
    while count < len(lines) and _blank(lines[count]):
        count += 1
    return count


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
    skip = _leading_blanks(lines[-2::-1]) if _blank(last) else 0
    if skip:
        bodies.append(lines[: len(lines) - 1 - skip])
    for body in bodies:
        cands.extend(_blocks_before(body, last, min_fragment, limit))
    return cands


def _blocks_before(body: list[str], last: str, min_fragment: int, limit: int) -> list[str]:
    """``last`` preceded by the last k lines of ``body``, for every k within ``limit``."""
    cands: list[str] = []
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
    skip = _leading_blanks(lines[1:]) if _blank(first) else 0
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


def _prefix_overlap_end(
    norm: str, plines: list[str], lead: int, min_fragment: int
) -> tuple[int, bool]:
    """Where the snippet's repeat of the prefix ends, and whether it repeated any text."""
    for cand in sorted(_prefix_candidates(plines, min_fragment, len(norm)), key=len, reverse=True):
        if norm.startswith(cand):
            return len(cand), not _blank(cand)
        if lead and norm.startswith(cand, 1):
            return 1 + len(cand), not _blank(cand)
    # On a blank cursor line a leading newline only adds an empty line; after text on
    # the cursor line it is a real line break and stays.
    return (1 if lead and _blank(plines[-1]) else 0), False


def _suffix_overlap_start(
    rest: str, slines: list[str], *, cursor_head: str, min_fragment: int, evidence: bool
) -> int:
    """Where the repeat of the suffix starts in ``rest`` (its length: no repeat)."""
    first = slines[0]
    trimmed = rest.rstrip()
    # Trailing whitespace is ignored on both sides: models drop trailing spaces and
    # add a final newline freely; whatever follows the match goes with the overlap.
    cands = {c.rstrip() for c in _suffix_candidates(slines, len(rest) + 1)}
    for cand in sorted(cands, key=lambda c: (-len(c), c)):
        if trimmed.endswith(cand):
            return len(trimmed) - len(cand)
        if cand[1:] == trimmed and cand.startswith("\n"):
            return 0  # the whole rest is the next line(s): nothing new to insert
    frag = first.rstrip()
    if frag.strip() and trimmed.endswith(frag):
        cut = len(trimmed) - len(frag)
        removed = _remove_fragment(
            cursor_head, rest[:cut], rest[cut:], first, min_fragment=min_fragment, evidence=evidence
        )
        return cut if removed else len(rest)
    if first and _blank(first) and rest.endswith(first):
        return len(rest) - len(first)  # whitespace-only rest of the cursor line, verbatim
    return len(rest)


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
    window = norm.count("\n") + 1 + _MAX_BLANK_SKIP
    plines = _tail_lines(prefix, window)
    # One newline right after <CODE> may be formatting: candidates may follow it.
    lead = 1 if optional_leading_newline and norm.startswith("\n") else 0
    start, evidence = _prefix_overlap_end(norm, plines, lead, min_fragment_overlap)
    end = len(norm)
    if norm[start:].strip() and suffix:
        end = start + _suffix_overlap_start(
            norm[start:],
            _head_lines(suffix, window),
            cursor_head=plines[-1],
            min_fragment=min_fragment_overlap,
            evidence=evidence,
        )
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
