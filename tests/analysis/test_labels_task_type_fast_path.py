"""`RuleBasedTaskTypeClassifier.__call__` (indexed rules) against ``explain`` (every rule
asked in turn, the original path): the same label, and every rule the same capped hits,
on the real sample battles, the hand-written snippets and variations of them."""

from __future__ import annotations

import random

import pytest

from analysis.labels import normalize_language
from analysis.labels.task_type import (
    RuleBasedTaskTypeClassifier,
    classify_task_type,
    default_task_type_classifier,
    extract_features,
)
from analysis.labels.task_type_rules import RULES, Rule
from tests.analysis.data.sample_battles import load_sample_battles
from tests.analysis.data.task_type_snippets import HELD_OUT_SNIPPETS, SNIPPETS

LANGUAGES = sorted({v for rule in RULES if rule.kind == "language" for v in rule.values})


def contexts() -> list[tuple[str, str, str]]:
    """(language, prefix, suffix): every sample and snippet, whole and cut up."""
    rng = random.Random(18)
    found = []
    for battle in load_sample_battles():
        found.append(("other", battle.prefix, battle.suffix))
    for snippet in (*SNIPPETS, *HELD_OUT_SNIPPETS):
        language = normalize_language(snippet["file_type"])
        found.append((language, snippet["prefix"], snippet["suffix"]))
    variations = []
    for language, prefix, suffix in found:
        lines = (prefix + suffix).splitlines(keepends=True)
        for _ in range(4):
            cut = rng.randrange(len(prefix) + 1)
            kept = "".join(line for line in lines if rng.random() < 0.5)
            variations += [
                (rng.choice(LANGUAGES), prefix[:cut], suffix),
                (language, prefix[cut:], ""),
                (language, "", kept),
                (rng.choice(LANGUAGES), kept, prefix[:cut]),
            ]
    return found + variations + [("other", "", ""), ("python", "x", "")]


def capped(rule: Rule, hits: int) -> int:
    return min(hits, rule.cap)


def test_fast_path_gives_explains_label_and_hits_on_every_context():
    contexts_seen = contexts()
    assert len(contexts_seen) > 2000
    classifier = default_task_type_classifier
    assert isinstance(classifier, RuleBasedTaskTypeClassifier)
    labels = set()
    for language, prefix, suffix in contexts_seen:
        kwargs = {"programming_language": language, "prefix": prefix, "suffix": suffix}
        label = classifier(**kwargs)
        assert label == classifier.explain(**kwargs).label, kwargs
        features = extract_features(**kwargs)
        fast = classifier._hits(features)
        for index, rule in enumerate(classifier.rules):
            assert capped(rule, fast.get(index, 0)) == capped(rule, rule.hits(features)), (
                rule.name,
                kwargs,
            )
        labels.add(label)
    assert len(labels) == 6  # every label is given somewhere


class _EveryLine(Rule):
    """A rule class of its own: its hits come from its own method."""

    def hits(self, features):
        return features.text.count("\n")


@pytest.mark.parametrize("code", ["def f():\n    return 1\n", "SELECT 1;\n" * 5, ""])
def test_custom_rule_classes_are_asked_themselves(code):
    extra = _EveryLine("systems", 1.0, "word", ("unused",), name="every line")
    classifier = RuleBasedTaskTypeClassifier((*RULES, extra))
    kwargs = {"programming_language": "python", "prefix": code, "suffix": ""}
    assert classifier(**kwargs) == classifier.explain(**kwargs).label
    assert classify_task_type(**kwargs) == default_task_type_classifier.explain(**kwargs).label
