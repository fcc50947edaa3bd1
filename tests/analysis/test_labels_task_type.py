"""Tests for analysis.labels.task_type: the rule-based task-type classifier."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from analysis.labels import label_context, normalize_language
from analysis.labels.task_type import (
    MIN_SCORE,
    TASK_TYPES,
    RuleBasedTaskTypeClassifier,
    classify_task_type,
    extract_features,
    extract_imports,
)
from analysis.labels.task_type_rules import RULES, Rule
from tests.analysis.data.sample_battles import load_sample_battles
from tests.analysis.data.task_type_snippets import HELD_OUT_SNIPPETS, SNIPPETS

HAND_LABELS = Path(__file__).parent / "data" / "sample_task_labels.json"


def classify_snippet(snippet: dict) -> str:
    return classify_task_type(
        programming_language=normalize_language(snippet["file_type"]),
        prefix=snippet["prefix"],
        suffix=snippet["suffix"],
    )


def test_snippet_set_is_broad_enough():
    assert len(SNIPPETS) >= 30
    assert len({s["id"] for s in SNIPPETS}) == len(SNIPPETS)
    per_label = Counter(s["label"] for s in SNIPPETS)
    assert set(per_label) == set(TASK_TYPES)
    assert min(per_label.values()) >= 5
    languages = {normalize_language(s["file_type"]) for s in SNIPPETS}
    assert len(languages) >= 15
    # Some snippets come without a fileType, as many real battles do.
    assert sum(s["file_type"] is None for s in SNIPPETS) >= 5


@pytest.mark.parametrize(
    ("name", "snippets"), [("tuning set", SNIPPETS), ("later set", HELD_OUT_SNIPPETS)]
)
def test_accuracy_on_hand_labelled_snippets(name, snippets):
    wrong = [
        (snippet["id"], snippet["label"], got)
        for snippet in snippets
        if (got := classify_snippet(snippet)) != snippet["label"]
    ]
    accuracy = 1 - len(wrong) / len(snippets)
    print(f"\ntask-type accuracy on {len(snippets)} snippets ({name}): {accuracy:.1%}; {wrong}")
    assert accuracy >= 0.90, wrong


def test_snippet_ids_unique_across_sets():
    ids = [s["id"] for s in SNIPPETS + HELD_OUT_SNIPPETS]
    assert len(ids) == len(set(ids))
    assert all(s["label"] in TASK_TYPES for s in SNIPPETS + HELD_OUT_SNIPPETS)


def load_hand_labels() -> dict[int, dict]:
    labels = json.loads(HAND_LABELS.read_text(encoding="utf-8"))["labels"]
    return {int(index): entry for index, entry in labels.items()}


def test_real_sample_battles_all_labelled_and_agree_with_hand_labels():
    battles = load_sample_battles()
    hand = load_hand_labels()
    assert len(battles) == 112
    assert set(hand) == {b.index for b in battles}

    got = {
        b.index: classify_task_type(programming_language="other", prefix=b.prefix, suffix=b.suffix)
        for b in battles
    }
    assert set(got.values()) <= set(TASK_TYPES)
    distribution = Counter(got.values())
    print(f"\ntask types of the 112 sample battles: {dict(distribution.most_common())}")
    # A real mix, not everything in one bucket.
    assert len(distribution) == len(TASK_TYPES)
    assert distribution.most_common(1)[0][1] <= 40

    confident = [i for i, entry in hand.items() if entry["confident"]]
    agree_confident = sum(got[i] == hand[i]["label"] for i in confident)
    agree_all = sum(got[i] == hand[i]["label"] for i in hand)
    print(
        f"agreement with hand labels: {agree_all}/{len(hand)} overall, "
        f"{agree_confident}/{len(confident)} on clear-cut rows"
    )
    assert agree_confident / len(confident) >= 0.95
    assert agree_all / len(hand) >= 0.80


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (0, "frontend"),  # VS Code extension (TypeScript, vscode API, views)
        (56, "frontend"),  # same extension, another spot
        (1, "algorithmic"),  # C++ binary search tree with insert/print
        (72, "algorithmic"),  # Java binary search tree
        (78, "algorithmic"),  # Rust Advent of Code, day 16
        (10, "backend"),  # FastAPI app
        (67, "backend"),  # Express controllers with auth
        (68, "backend"),  # psycopg2 repository with SQL
        (84, "data_ml"),  # PyTorch training template
        (104, "data_ml"),  # pandas/seaborn win-rate plots
        (111, "systems"),  # Rust kernel entry point
        (37, "systems"),  # duplicate-file finder with os.walk and hashlib
        (74, "other"),  # LaTeX paper
        (30, "other"),  # chat transcript
        (93, "other"),  # a JSON literal
    ],
)
def test_inspected_sample_battles(index, expected):
    battle = next(b for b in load_sample_battles() if b.index == index)
    assert (
        classify_task_type(programming_language="other", prefix=battle.prefix, suffix=battle.suffix)
        == expected
    )


def test_explain_matches_scores_and_threshold():
    classifier = RuleBasedTaskTypeClassifier()
    explanation = classifier.explain(
        programming_language="python",
        prefix="import pandas as pd\ndf = pd.read_csv('x.csv')\ndf.groupby('a').sum()\n",
        suffix="",
    )
    assert explanation.label == "data_ml"
    totals = dict.fromkeys(TASK_TYPES, 0.0)
    for label, _name, contribution in explanation.fired:
        totals[label] += contribution
    assert totals == pytest.approx(explanation.scores)
    assert explanation.scores["data_ml"] >= MIN_SCORE


def test_weak_evidence_falls_back_to_other():
    classifier = RuleBasedTaskTypeClassifier()
    explanation = classifier.explain(
        programming_language="other", prefix="x = sorted(values)\n", suffix=""
    )
    assert 0 < max(explanation.scores.values()) < MIN_SCORE
    assert explanation.label == "other"


def test_empty_context_is_other():
    assert classify_task_type(programming_language="other", prefix="", suffix="") == "other"


def test_file_type_alone_can_decide():
    assert classify_task_type(programming_language="css", prefix="", suffix="") == "frontend"
    assert classify_task_type(programming_language="dockerfile", prefix="", suffix="") == "systems"
    assert classify_task_type(programming_language="markdown", prefix="", suffix="") == "other"


def test_rules_table_is_well_formed():
    assert {rule.label for rule in RULES} == set(TASK_TYPES)
    for rule in RULES:
        assert rule.weight > 0 and rule.cap >= 1
        assert (rule.pattern is not None) == (rule.kind == "pattern")
        assert rule.values or rule.pattern is not None


def test_unknown_label_in_rules_is_rejected():
    with pytest.raises(ValueError, match="spaceships"):
        RuleBasedTaskTypeClassifier([Rule("spaceships", 1.0, "word", ("rocket",))])


def test_custom_rules_extend_the_table():
    extra = Rule("backend", 5.0, "word", ("graphene",), name="graphene")
    classifier = RuleBasedTaskTypeClassifier((*RULES, extra))
    code = "schema = graphene.Schema(query=Query)\n"
    assert classifier(programming_language="python", prefix=code, suffix="") == "backend"
    assert classify_task_type(programming_language="python", prefix=code, suffix="") == "other"


def test_replaceable_by_any_callable():
    calls = []

    def llm_labeller(*, programming_language: str, prefix: str, suffix: str) -> str:
        calls.append((programming_language, prefix, suffix))
        return "backend"

    labels = label_context(
        file_type="py", prefix="print(1)", suffix="", task_classifier=llm_labeller
    )
    assert labels.task_type == "backend"
    assert calls == [("python", "print(1)", "")]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (
            "import numpy as np, pandas\nfrom sklearn.cluster import KMeans\n",
            {"numpy", "pandas", "sklearn", "sklearn.cluster"},
        ),
        (
            "import { Button } from '@/components/ui/button';\nimport React from 'react'\n",
            {"@/components/ui/button", "react"},
        ),
        ('import {\n  A,\n  B,\n} from "@angular/core";\n', {"@angular", "@angular/core"}),
        ("const express = require('express');\n", {"express"}),
        (
            '#include <linux/module.h>\n#include "mine.h"\n',
            {"linux", "linux/module", "linux/module.h", "mine", "mine.h"},
        ),
        ("using System.Net;\nusing static System.Math;\n", {"system", "system.net", "system.math"}),
        ("use std::sync::{Arc, Mutex};\n", {"std", "std::sync"}),
        (
            "import 'package:flutter/material.dart';\n",
            {"flutter", "flutter/material", "flutter/material.dart"},
        ),
        ("library(dplyr)\nrequire(ggplot2)\n", {"dplyr", "ggplot2"}),
        ('package main\n\nimport (\n\t"fmt"\n\t"net/http"\n)\n', {"fmt", "net", "net/http"}),
        ("from . import models\nfrom .views import home\n", {".views"}),
    ],
)
def test_import_extraction(code, expected):
    assert extract_imports(code) >= expected
    features = extract_features(programming_language="other", prefix=code, suffix="")
    assert features.imports == extract_imports(code)
