"""Natural-language slice label: the human language of the comments and strings around the cursor.

How it works:

1. Pull comments and string literals out of the code with one regular expression that
   knows the common syntaxes: ``#`` and ``//`` line comments, ``/* */`` blocks, ``--``
   (SQL, Lua, Haskell), ``<!-- -->``, Python triple quotes and ordinary single/double
   quoted strings. For prose file types (Markdown, plain text, LaTeX, CSV) the whole
   text is used instead.
2. Keep only word-like tokens made of letters: identifiers that leak into comments and
   strings (``snake_case``, ``camelCase``, anything with digits) are dropped, so a
   commented-out line of code does not vote for English.
3. If fewer than ``MIN_LETTERS`` letters remain the answer is ``"unknown"``; otherwise
   lingua (offline n-gram models) scores the ``DETECTABLE_LANGUAGES``. English gets prior
   odds of ``ENGLISH_PRIOR_ODDS`` to 1 against each other language (see below), and if no
   language then reaches ``MIN_POSTERIOR`` the answer is ``"unknown"``.

The result is an ISO 639-1 code (``"en"``, ``"zh"``...) or ``"unknown"``.

Why high-accuracy mode and an English prior: comment text is short and full of technical
English that looks European to n-gram models. On 55 real-looking comment phrases (40
English), lingua's low-accuracy mode got 41 right (it called "python code to loop
times" German and "full tetris game" Swedish); high-accuracy mode got 50; high accuracy
plus the 5:1 English prior and the 0.4 floor got 53 with 2 "unknown" and no wrong
answer, while still recognising short Spanish, French, German, Portuguese, Russian,
Chinese and Vietnamese comments.

Cost (figures in docs/performance.md, "Measured by hand"): the detector is built lazily once
per process; the first detection loads the n-gram models, which takes seconds and hundreds of
megabytes for the 25 languages (low-accuracy mode would take a tenth). After that a detection
is cheap, and extraction scans a window of at most ``PREFIX_WINDOW + SUFFIX_WINDOW``
characters. Long-running workers can call ``warm_up()`` at start so no battle pays the load.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lingua import LanguageDetector

# Bump when extraction, the language set, the threshold or the lingua mode changes.
VERSION = "1"

UNKNOWN = "unknown"

# 25 languages developers often comment in (the seed paper saw 24 in real battles).
# Restricting the set makes lingua faster and stops rare look-alikes winning on short text.
DETECTABLE_LANGUAGES: tuple[str, ...] = (
    "en", "zh", "es", "pt", "fr", "de", "ru", "ja", "ko", "it", "nl", "pl",
    "tr", "vi", "id", "uk", "fa", "ar", "hi", "cs", "sv", "he", "th", "el", "hr",
)  # fmt: skip

NATURAL_LANGUAGES: tuple[str, ...] = (*DETECTABLE_LANGUAGES, UNKNOWN)
"""Every value ``detect_natural_language`` can return."""

MIN_LETTERS = 20
"""Below this many letters of comment/string text the language is ``"unknown"``.

Twenty letters is about four short words: enough for lingua to beat chance between
close languages most of the time, while a lone ``# TODO`` or ``"id"`` stays unknown.
One CJK ideograph, kana or Hangul syllable counts as ``CJK_LETTER_WEIGHT`` letters,
because a single one carries about as much as a Latin syllable or short word.
"""

CJK_LETTER_WEIGHT = 3

ENGLISH_PRIOR_ODDS = 5.0
"""Prior odds of English against each other language (developers mostly comment in English)."""

MIN_POSTERIOR = 0.4
"""Below this posterior probability for the best language the answer is ``"unknown"``."""

MAX_TEXT_CHARS = 1_000
"""At most this much extracted text is given to lingua (cost grows with length)."""

PREFIX_WINDOW = 16_000
SUFFIX_WINDOW = 4_000
"""Only the end of the prefix and the start of the suffix are scanned for comments."""

_PROSE_LANGUAGES = frozenset({"markdown", "plaintext", "latex", "csv"})

# The leading look-ahead lets the scanner skip ordinary code characters quickly (several
# times faster than trying every alternative at every position).
_COMMENT_OR_STRING = re.compile(
    r"""
    (?=[/<"'\#-])
    (?:
      /\*(?P<block>.*?)(?:\*/|\Z)                 # C-style block comment
    | <!--(?P<html>.*?)(?:-->|\Z)                 # HTML/XML comment
    | \"\"\"(?P<tdq>.*?)(?:\"\"\"|\Z)             # Python triple-quoted strings
    | '''(?P<tsq>.*?)(?:'''|\Z)
    | (?<![:\w])//(?P<slash>[^\n]*)               # // comment, but not the // of a URL
    | (?<![\w&$\#])\#(?![!\[{])(?P<hash>[^\n]*)   # # comment (not #! or #[attr] or #{})
    | (?<![-\w])--[ \t](?P<dash>[^\n]*)           # -- comment (SQL, Lua, Haskell)
    | "(?P<dq>(?:[^"\\\n]|\\.)*)"                 # "string"
    | '(?P<sq>(?:[^'\\\n]|\\.)*)'                 # 'string'
    )
    """,
    re.VERBOSE | re.DOTALL,
)

# Preprocessor-style lines start with '#' but are code, not comments.
_DIRECTIVE = re.compile(
    r"(?:include|define|if|ifdef|ifndef|endif|else|elif|pragma|import|"
    r"region|endregion|undef|error|line)\b"
)

# A word: letters only (any script), apostrophes/hyphens inside allowed. Single Latin
# letters are dropped (printf's "%d", loop variables); a single CJK character is a word.
_WORD = re.compile(
    r"[^\W\d_]{2,}(?:['\u2019-][^\W\d_]+)*|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"
)
# Tokens that are identifiers, not words: snake_case, camelCase, with digits, dotted.
_IDENTIFIER_TOKEN = re.compile(r"\S*(?:_|\d|[a-z][A-Z]|\.\w)\S*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")

_detector_lock = threading.Lock()
_detector_instance: LanguageDetector | None = None


def _detector() -> LanguageDetector:
    """The lingua detector, built once per process on first use (thread-safe)."""
    global _detector_instance
    if _detector_instance is None:
        with _detector_lock:
            if _detector_instance is None:
                # Imported here so importing the labels package stays cheap.
                from lingua import IsoCode639_1, LanguageDetectorBuilder

                codes = [getattr(IsoCode639_1, code.upper()) for code in DETECTABLE_LANGUAGES]
                builder = LanguageDetectorBuilder.from_iso_codes_639_1(*codes)
                _detector_instance = builder.build()
    return _detector_instance


def extract_comment_text(code: str) -> list[str]:
    """Comment bodies and string-literal contents found in ``code``, in order."""
    pieces: list[str] = []
    for match in _COMMENT_OR_STRING.finditer(code):
        kind = match.lastgroup
        text = match.group(kind) if kind else None
        if not text:
            continue
        if kind == "hash" and _DIRECTIVE.match(text):
            continue
        pieces.append(text)
    return pieces


def words_of(text: str) -> list[str]:
    """Natural-language words in ``text``: identifier-looking tokens removed."""
    words: list[str] = []
    for token in text.split():
        if _IDENTIFIER_TOKEN.fullmatch(token):
            continue
        words.extend(_WORD.findall(token))
    return words


def letter_count(words: list[str]) -> int:
    """Letters in ``words``, a CJK character counting ``CJK_LETTER_WEIGHT`` times."""
    total = sum(len(w) for w in words)
    cjk = sum(len(_CJK.findall(w)) for w in words)
    return total + (CJK_LETTER_WEIGHT - 1) * cjk


def natural_text(*, prefix: str, suffix: str, programming_language: str | None = None) -> str:
    """The text whose language is detected: comment/string words nearest the cursor."""
    prefix_window = prefix[-PREFIX_WINDOW:]
    suffix_window = suffix[:SUFFIX_WINDOW]
    if programming_language in _PROSE_LANGUAGES:
        before, after = [prefix_window], [suffix_window]
    else:
        before = extract_comment_text(prefix_window)
        after = extract_comment_text(suffix_window)
    before_words = words_of(" ".join(before))
    after_words = words_of(" ".join(after))
    # Prefer text just before the cursor (what the developer is writing about), then
    # fill up with text after it.
    kept_before: list[str] = []
    budget = MAX_TEXT_CHARS
    for word in reversed(before_words):
        if budget <= 0:
            break
        kept_before.append(word)
        budget -= len(word) + 1
    kept_before.reverse()
    kept_after: list[str] = []
    for word in after_words:
        if budget <= 0:
            break
        kept_after.append(word)
        budget -= len(word) + 1
    return " ".join(kept_before + kept_after)


def detect_natural_language(
    *, prefix: str, suffix: str, programming_language: str | None = None
) -> str:
    """ISO 639-1 code of the language of the context's comments/strings, or ``"unknown"``.

    ``programming_language`` is the canonical name from ``normalize_language``; it only
    matters for prose formats, whose whole text is used.
    """
    text = natural_text(prefix=prefix, suffix=suffix, programming_language=programming_language)
    if letter_count(text.split()) < MIN_LETTERS:
        return UNKNOWN
    return language_of_text(text)


def language_of_text(text: str) -> str:
    """Most probable language of ``text`` after the English prior, or ``"unknown"``."""
    posterior: dict[str, float] = {}
    for confidence in _detector().compute_language_confidence_values(text):
        code = confidence.language.iso_code_639_1.name.lower()
        odds = ENGLISH_PRIOR_ODDS if code == "en" else 1.0
        posterior[code] = confidence.value * odds
    total = sum(posterior.values())
    if total <= 0.0:
        return UNKNOWN
    best = max(posterior, key=posterior.__getitem__)
    if posterior[best] / total < MIN_POSTERIOR:
        return UNKNOWN
    return best


def warm_up() -> None:
    """Build the detector and load its models now (for worker start-up)."""
    language_of_text("This sentence loads the language models. Ceci charge les modèles.")
