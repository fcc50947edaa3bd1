"""Task-type slice label: what kind of work the developer is doing, from the code context.

A transparent rule-based classifier. Every rule is one row of ``RULES``: a label, a
weight, the evidence it looks for, and a cap. The context is first reduced to a few
cheap features:

* ``language``   - the canonical programming language (from ``normalize_language``);
* ``imports``    - module names from import/include/using/use/require/library lines of
  the common languages, plus their parent packages (``sklearn.cluster`` also gives
  ``sklearn``; ``@angular/core`` also gives ``@angular``), lower-cased;
* ``words``      - the set of identifier-like tokens (case kept: ``SELECT`` is not
  ``select``);
* ``line_heads`` - the first whitespace-separated token of every line, after leading
  spaces and list dashes (``RUN``, ``sudo``, ``runs-on:``, ``!pip``, ``color:``);
* ``text``       - the raw text, for literal substrings (``"cursor.execute("``) and the
  two regular expressions (HTML tags, JSX elements).

Rule kinds and their *hits*: ``language`` (1 if the language is listed), ``import``,
``word`` and ``line_head`` (how many of the listed values are present; an import value
ending in ``*`` matches as a prefix), ``substring`` (how many of the listed strings occur
in the text) and ``pattern`` (number of regex matches). A rule adds
``weight * min(hits, cap)`` to its label. The label with the highest total wins if it
reaches ``MIN_SCORE``; otherwise the answer is ``"other"`` (too little evidence). Ties go
to the label listed first in ``TASK_TYPES``. ``RuleBasedTaskTypeClassifier.explain``
returns the score table and every rule that fired: use it to debug or tune a rule.

Labels (``TASK_TYPES``):

* ``frontend``    - what a user sees and touches: web pages and components (HTML, CSS,
  React, Vue, Angular, Svelte, server templates), mobile and desktop UIs (React Native,
  Flutter, SwiftUI, Tkinter, Qt), editor and browser extensions, games and interactive
  graphics (Unity, Godot, pygame).
* ``backend``     - server-side application code: HTTP APIs and routes, web frameworks
  (Django, Flask, FastAPI, Express, Spring, ASP.NET, Laravel), databases and SQL, auth,
  bots and service integrations.
* ``data_ml``     - data analysis and machine learning: dataframes, numeric arrays,
  plots, notebooks, training and inference, LLM/agent pipelines, computer vision.
* ``algorithmic`` - self-contained algorithms and data structures, exercises and
  competitive programming (sorting, trees, lists, graphs, DP, stdin in / stdout out,
  Advent of Code, LeetCode).
* ``systems``     - close to the machine or to operations: OS and kernel code, embedded
  and hardware I/O, concurrency primitives, shell/PowerShell scripts, build, CI,
  container and infrastructure files, file-system and process automation.
* ``other``       - prose, documentation, LaTeX, data literals, trivial snippets, or not
  enough evidence for any of the above.

Replacing it: the classifier is one implementation of ``TaskTypeClassifier`` (a callable
taking keyword arguments ``programming_language``, ``prefix`` and ``suffix`` and returning
one of ``TASK_TYPES``). An LLM labeller implementing the same call can be passed to
``label_context(task_classifier=...)``; bump ``VERSION`` (or use a new one) when it is.

Cost: features are computed on at most ``HEAD_WINDOW + TAIL_WINDOW`` characters of the
prefix and ``SUFFIX_WINDOW`` of the suffix (imports live at the top of a file, the task
near the cursor), so a 100 KB context costs the same as a 20 KB one (docs/performance.md,
"Measured by hand"). Regular expressions are avoided on purpose: a Python regex without a
literal first character scans the whole window, while a literal substring test or a set
lookup is far cheaper.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from analysis.labels.task_type_rules import RULES, Features, Rule

# Bump whenever RULES (task_type_rules.py), MIN_SCORE or the feature extraction changes.
VERSION = "1"

TASK_TYPES: tuple[str, ...] = ("frontend", "backend", "data_ml", "algorithmic", "systems", "other")

MIN_SCORE = 2.0
"""A label needs at least this total to win; below it the answer is ``"other"``."""

HEAD_WINDOW = 8_000
TAIL_WINDOW = 8_000
SUFFIX_WINDOW = 4_000


class TaskTypeClassifier(Protocol):
    """Anything that labels a context with one of ``TASK_TYPES``."""

    def __call__(self, *, programming_language: str, prefix: str, suffix: str) -> str: ...


# Import-like statements across languages; group 1 is a module name or a comma list.
# They only run on lines that contain an import keyword (see _has_import_keyword).
_IMPORT_PATTERNS: tuple[re.Pattern[str], ...] = (
    # Python: from x.y import z / import x, y  (also Java/Kotlin/Scala: import a.b.C)
    re.compile(r"^from[ \t]+([\w.]+)[ \t]+import\b"),
    re.compile(
        r"^import[ \t]+(?:static[ \t]+)?"
        r"([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)"
    ),
    # JS/TS/Dart/Go: import ... from 'x' / } from 'x' / import 'x' / require('x') / import('x')
    re.compile(r"""\bfrom[ \t]*['"]([^'"\n]+)['"]"""),
    re.compile(r"""^import[ \t]*\(?[ \t]*['"]([^'"\n]+)['"]"""),
    re.compile(r"""\brequire(?:_relative)?[ \t]*\(?[ \t]*['"]([^'"\n]+)['"]"""),
    # C/C++: #include <x> / "x"
    re.compile(r"""^#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]"""),
    # C#/Julia: using A.B; / using X, Y
    re.compile(r"^using[ \t]+(?:static[ \t]+)?([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*)"),
    # Rust/PHP/Elixir: use a::b / use App\Models\X / use Phoenix.Controller
    re.compile(r"^(?:pub(?:\([\w ]+\))?[ \t]+)?use[ \t]+([\w:\\.]+)"),
    re.compile(r"^extern[ \t]+crate[ \t]+(\w+)"),
    # R: library(x) / require(x)
    re.compile(r"\b(?:library|require)\([ \t]*['\"]?([\w.]+)"),
)
_GO_IMPORT_BLOCK = re.compile(r"import[ \t]*\(([^)]*)\)")
_QUOTED = re.compile(r"""["'`]([^"'`\n]+)["'`]""")
_SEPARATORS = re.compile(r"[./:\\]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _module_names(raw: str) -> set[str]:
    """``raw`` and its parent packages, lower-cased; relative imports only as written."""
    name = raw.strip().strip(";").lower()
    if name.startswith("package:"):
        name = name[len("package:") :]
    name = name.rstrip(":\\.")
    if not name:
        return set()
    if name.startswith((".", "/", "~", "@/")):
        return {name}
    names = {name}
    # Parent packages keep the original separators: "@angular/core" -> "@angular".
    for match in _SEPARATORS.finditer(name):
        if match.start() > 0:
            names.add(name[: match.start()])
    return names


def _imports_from_lines(lines: Iterable[str], text: str) -> frozenset[str]:
    """Modules named on the candidate ``lines``, plus Go ``import ( ... )`` blocks of ``text``."""
    modules: set[str] = set()
    for line in lines:
        for pattern in _IMPORT_PATTERNS:
            for match in pattern.finditer(line):
                for part in match.group(1).split(","):
                    words = part.split()
                    if words:
                        modules |= _module_names(words[0])
    if "import" in text:
        # Go lists one quoted path per line inside the block, with no keyword on the line.
        for block in _GO_IMPORT_BLOCK.finditer(text):
            for quoted in _QUOTED.finditer(block.group(1)):
                modules |= _module_names(quoted.group(1))
    return frozenset(modules)


def extract_imports(text: str) -> frozenset[str]:
    """Imported module names (and their parent packages) found in ``text``."""
    lines = (line.lstrip() for line in text.splitlines())
    return _imports_from_lines((line for line in lines if _has_import_keyword(line)), text)


def _has_import_keyword(line: str) -> bool:
    # Spelled out rather than any(...) over _IMPORT_KEYWORDS: this runs once per line and
    # the generator version is several times slower.
    return (
        "import" in line
        or "from" in line
        or "include" in line
        or "using" in line
        or "use " in line
        or "require" in line
        or "library(" in line
        or "crate" in line
    )


def _window(prefix: str, suffix: str) -> str:
    if len(prefix) > HEAD_WINDOW + TAIL_WINDOW:
        prefix = prefix[:HEAD_WINDOW] + "\n" + prefix[-TAIL_WINDOW:]
    return prefix + suffix[:SUFFIX_WINDOW]


def extract_features(*, programming_language: str, prefix: str, suffix: str) -> Features:
    """Reduce a context to the features the rules use (one pass over the lines)."""
    text = _window(prefix, suffix)
    heads: set[str] = set()
    import_lines: list[str] = []
    for line in text.splitlines():
        # split() also drops Unicode whitespace (U+00A0, U+3000, U+001F ...) that lstrip
        # keeps, so a line of only such characters has no head at all.
        stripped = line.lstrip(" \t-")
        head = stripped.split(None, 1)
        if not head:
            continue
        heads.add(head[0])
        if _has_import_keyword(stripped):
            import_lines.append(line.lstrip())
    return Features(
        language=programming_language,
        imports=_imports_from_lines(import_lines, text),
        words=frozenset(_IDENTIFIER.findall(text)),
        line_heads=frozenset(heads),
        text=text,
    )


@dataclass(frozen=True)
class TaskTypeExplanation:
    """The score table behind one decision."""

    label: str
    scores: dict[str, float]
    fired: tuple[tuple[str, str, float], ...] = field(default=())
    """(label, rule name, contribution) for every rule that added something."""


class RuleBasedTaskTypeClassifier:
    """The default ``TaskTypeClassifier``: a weighted rule table (see module docstring)."""

    def __init__(self, rules: Iterable[Rule] = RULES, *, min_score: float = MIN_SCORE) -> None:
        self.rules = tuple(rules)
        unknown = {rule.label for rule in self.rules} - set(TASK_TYPES)
        if unknown:
            raise ValueError(f"rules use unknown labels: {sorted(unknown)}")
        self.min_score = min_score
        self._index_rules()

    def _index_rules(self) -> None:
        """Lookup tables for `__call__`: value -> rules listing it, per kind.

        ``explain`` asks every rule in turn; most find nothing (a context names a handful
        of the ~1,100 listed values). `__call__` gets the same hits from the few values the
        features do contain: each present word, line head, import or language is looked up
        once, and only substring, pattern and import-prefix rules are asked themselves.
        Rules of other classes than `Rule` are always asked (their `hits` may differ).
        """
        self._words: dict[str, list[int]] = {}
        self._heads: dict[str, list[int]] = {}
        self._imports: dict[str, list[int]] = {}
        self._languages: dict[str, list[int]] = {}
        self._asked: list[int] = []  # substring, pattern, import prefixes, other classes
        tables = {
            "word": self._words,
            "line_head": self._heads,
            "import": self._imports,
            "language": self._languages,
        }
        for index, rule in enumerate(self.rules):
            table = tables.get(rule.kind) if type(rule) is Rule else None
            if table is None:
                self._asked.append(index)
                continue
            for value in rule._set:
                table.setdefault(value, []).append(index)
            if rule.kind == "import" and rule._prefixes:
                self._asked.append(index)  # its prefix part; the set part is indexed
        self._word_set = frozenset(self._words)
        self._head_set = frozenset(self._heads)
        self._import_set = frozenset(self._imports)

    def _hits(self, features: Features) -> dict[int, int]:
        """rule index -> hits, for the rules with any (what ``rule.hits`` gives each)."""
        hits: dict[int, int] = {}
        for present, table in (
            (features.words & self._word_set, self._words),
            (features.line_heads & self._head_set, self._heads),
            (features.imports & self._import_set, self._imports),
        ):
            for value in present:
                for index in table[value]:
                    hits[index] = hits.get(index, 0) + 1
        for index in self._languages.get(features.language, ()):
            hits[index] = hits.get(index, 0) + 1
        for index in self._asked:
            found = _asked_hits(self.rules[index], features)
            if found:
                hits[index] = hits.get(index, 0) + found
        return hits

    def explain(
        self, *, programming_language: str, prefix: str, suffix: str
    ) -> TaskTypeExplanation:
        """Label plus the per-label totals and every rule that fired."""
        features = extract_features(
            programming_language=programming_language, prefix=prefix, suffix=suffix
        )
        scores = dict.fromkeys(TASK_TYPES, 0.0)
        fired: list[tuple[str, str, float]] = []
        for rule in self.rules:
            hits = rule.hits(features)
            if hits:
                contribution = rule.weight * min(hits, rule.cap)
                scores[rule.label] += contribution
                fired.append((rule.label, rule.name, contribution))
        best = max(TASK_TYPES, key=scores.__getitem__)  # max keeps the first of equals
        label = best if scores[best] >= self.min_score else "other"
        return TaskTypeExplanation(label=label, scores=scores, fired=tuple(fired))

    def __call__(self, *, programming_language: str, prefix: str, suffix: str) -> str:
        """``explain(...).label``, from the indexed rules (see `_index_rules`): the same
        contributions added in the same order, so the same totals and the same label."""
        features = extract_features(
            programming_language=programming_language, prefix=prefix, suffix=suffix
        )
        scores = dict.fromkeys(TASK_TYPES, 0.0)
        rules = self.rules
        for index, hits in sorted(self._hits(features).items()):
            rule = rules[index]
            scores[rule.label] += rule.weight * min(hits, rule.cap)
        best = max(TASK_TYPES, key=scores.__getitem__)  # max keeps the first of equals
        return best if scores[best] >= self.min_score else "other"


def _asked_hits(rule: Rule, features: Features) -> int:
    """The hits of a rule the index cannot answer: its import prefixes alone (the set part
    is indexed), its substrings counted up to the cap (the score uses min(hits, cap)), or
    whatever the rule itself says."""
    if type(rule) is not Rule:
        return rule.hits(features)
    if rule.kind == "import":
        prefixes = rule._prefixes
        return sum(1 for module in features.imports if module.startswith(prefixes))
    if rule.kind == "substring":
        found, cap, text = 0, rule.cap, features.text
        for value in rule.values:
            if value in text:
                found += 1
                if found >= cap:
                    break
        return found
    return rule.hits(features)


default_task_type_classifier: TaskTypeClassifier = RuleBasedTaskTypeClassifier()


def classify_task_type(*, programming_language: str, prefix: str, suffix: str) -> str:
    """Task type of a context with the default rule-based classifier."""
    return default_task_type_classifier(
        programming_language=programming_language, prefix=prefix, suffix=suffix
    )
