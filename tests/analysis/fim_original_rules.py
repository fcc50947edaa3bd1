"""The original Copilot Arena server's clean-up rules, re-stated for comparison only.

Written from a reading of the behaviour of the public server (lmarena/copilot-arena,
``server/apis/utils.py``: ``parse_response`` / ``remove_overlap``, and the
``chat_psm_overlap`` template's stop words and start phrases); the code is our own.
It is a test helper: the product uses ``analysis.fim``.

Behaviour reproduced, including its quirks:

1. Keep the first ``max_lines + 1`` lines of the raw answer.
2. Start phrases (``"<CODE>\\n"``, then ``"<CODE>"``): cut after the first one found.
3. Fences: only a fixed list of info strings (python, typescript, javascript, markdown,
   html, css, java, c, cpp, csharp, go, rust, swift, kotlin, ruby, php, haskell), each as
   ``"```lang\\n"``, searched anywhere; a bare ``"```\\n"`` is not recognised. If one is
   found, cut after it and then at the *last* ``"\\n```"``.
4. Stop words are tried in list order and the first one *present* truncates the text
   (not necessarily the earliest in the text).
5. Overlap (chat templates with the "overlap" option): drop trailing newlines of the
   answer and of the suffix, convert CRLF/CR to LF in prefix, suffix and answer, then
       a. remove the longest end of the prefix that the answer starts with (any length),
       b. remove the longest start of the suffix that the answer ends with (any length),
       c. remove the longest end of the suffix that the answer also ends with.
   The original then compares the suffix length before and after normalisation, but
   both lengths are taken after it, so that adjustment never changes anything.
"""

from __future__ import annotations

from collections.abc import Sequence

ORIGINAL_STOP_TOKENS: tuple[str, ...] = (
    "</CODE>",
    "<SUFFIX>",
    "</SUFFIX>",
    "<PREFIX>",
    "</PREFIX>",
)
ORIGINAL_START_PHRASES: tuple[str, ...] = ("<CODE>\n", "<CODE>")
_FENCE_LANGS = (
    "python",
    "typescript",
    "javascript",
    "markdown",
    "html",
    "css",
    "java",
    "c",
    "cpp",
    "csharp",
    "go",
    "rust",
    "swift",
    "kotlin",
    "ruby",
    "php",
    "haskell",
)


def _to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _end_start_overlap(a: str, b: str) -> int:
    """Length of the longest end of ``a`` that is also a start of ``b``."""
    for n in range(min(len(a), len(b)), 0, -1):
        if a[-n:] == b[:n]:
            return n
    return 0


def _end_end_overlap(a: str, b: str) -> int:
    """Length of the longest common end of ``a`` and ``b``."""
    for n in range(min(len(a), len(b)), 0, -1):
        if a[-n:] == b[-n:]:
            return n
    return 0


def original_remove_overlap(prefix: str, suffix: str, mid: str) -> str:
    prefix, suffix, mid = _to_lf(prefix), _to_lf(suffix), _to_lf(mid)
    n = _end_start_overlap(prefix, mid)
    if n:
        mid = mid[n:]
    n = _end_start_overlap(mid, suffix)
    if n:
        mid = mid[:-n]
    n = _end_end_overlap(mid, suffix)
    if n:
        mid = mid[:-n]
    return mid


def original_parse_response(
    completion: str,
    *,
    prefix: str,
    suffix: str,
    max_lines: int,
    stop_tokens: Sequence[str] = ORIGINAL_STOP_TOKENS,
    start_phrases: Sequence[str] = ORIGINAL_START_PHRASES,
    overlap: bool = True,
) -> str:
    text = "\n".join(completion.split("\n")[: max_lines + 1])
    for phrase in start_phrases:
        i = text.find(phrase)
        if i != -1:
            text = text[i + len(phrase) :]
            break
    fenced = False
    for lang in _FENCE_LANGS:
        marker = f"```{lang}\n"
        i = text.find(marker)
        if i != -1:
            text = text[i + len(marker) :]
            fenced = True
            break
    if fenced:
        j = text.rfind("\n```")
        if j != -1:
            text = text[:j]
    for token in stop_tokens:
        i = text.find(token)
        if i != -1:
            text = text[:i]
            break
    if overlap:
        text = original_remove_overlap(prefix, suffix.rstrip("\n"), text.rstrip("\n"))
    return text
