"""The three suites end to end over HTTP: the arena's provider client, the stub's scripted models.

Needs Django settings (``serving.providers`` and ``serving.prompts`` import models) but no
database. The stub plays correct and wrong models, answers wrapped in prose and fences, judges
that are consistent, biased, malformed or hanging; the scores must come out as scripted.
"""

from __future__ import annotations

import pytest

from evaluations import humaneval as he
from evaluations import infilling as inf
from evaluations import judge as j
from evaluations.judge_stats import summarize
from evaluations.questions import load_questions
from tests.evaluations.provider_calls import provider_fn

HUMANEVAL = he.load_problems()[::12]  # 14 problems
LIGHT = inf.load_problems("random-span-light")
QUESTIONS = load_questions()


def chat(stub, model, **kw):
    return provider_fn(stub.base_url, model, **kw)


def test_humaneval_scripted_correct_and_wrong_models(stub):
    markers = {p.task_id: p.prompt.rstrip()[-200:] for p in HUMANEVAL}
    assert len(set(markers.values())) == len(HUMANEVAL)
    wrong = {p.task_id for p in HUMANEVAL[::3]}
    stub.behave(
        "stub-coder",
        wrap="prose_fence",
        answers={
            markers[p.task_id]: p.prompt
            + ("    return None\n" if p.task_id in wrong else p.canonical_solution)
            for p in HUMANEVAL
        },
    )
    result = he.run_suite(HUMANEVAL, chat(stub, "stub-coder"), max_workers=2)
    assert {r.task_id for r in result.results if not r.passed} == wrong
    assert result.pass_at_1 == pytest.approx(1 - len(wrong) / len(HUMANEVAL))
    assert all(r.extracted is not None for r in result.results)


def test_humaneval_timeouts_are_recorded_per_item(stub):
    stub.behave("stub-slow", hang=True)
    result = he.run_suite(HUMANEVAL[:2], chat(stub, "stub-slow", timeout=0.3), max_workers=2)
    assert result.statuses == {he.PROVIDER_ERROR: 2}
    assert all(r.error.startswith("timeout") for r in result.results)


def test_chat_prompts_without_django_equal_serving_prompts():
    from serving import prompts as serving_prompts

    for p in LIGHT:
        ours = inf.build_request(p, chat=True)
        theirs = inf.build_request(p, chat=True, prompts=serving_prompts)
        assert tuple(ours.prompt.messages) == theirs.prompt.messages
        assert tuple(ours.prompt.stop) == theirs.prompt.stop
        raw = f"Sure:\n<CODE>{p.prompt.rsplit(chr(10), 1)[-1]}{p.canonical_solution}</CODE>"
        kw = {"chat": True, "prefix": p.prompt, "suffix": p.suffix, "max_lines": None}
        assert inf.CHAT_PROMPTS.clean_completion(raw, **kw) == serving_prompts.clean_completion(
            raw, **kw
        )
    assert inf.prompt_fingerprint(chat=True) == inf.prompt_fingerprint(
        chat=True, prompts=serving_prompts
    )


@pytest.mark.parametrize("kind", ["openai_completion", "mistral_fim"])
def test_infilling_native_fim_with_reference_middles_passes(stub, kind):
    from serving import prompts as serving_prompts

    picked = LIGHT[::10]
    stub.behave("stub-fim", answers={p.prompt + p.suffix: p.canonical_solution for p in picked})
    report = inf.run_suite(
        picked,
        chat(stub, "stub-fim", kind=kind),
        chat=False,
        prompts=serving_prompts,
        max_workers=2,
    )
    # Native FiM clean-up stops at a blank line: only holes without one come back whole.
    whole = [p.task_id for p in picked if "\n\n" not in p.canonical_solution]
    assert [r.task_id for r in report.results if r.passed] == whole
    assert len(whole) >= len(picked) // 2


@pytest.mark.parametrize("wrap", [None, "prose", "fence", "prose_fence"])
def test_infilling_chat_answers_through_the_clean_up(stub, wrap):
    from serving import prompts as serving_prompts

    picked = LIGHT[::16]
    stub.behave(
        "stub-chat",
        wrap=wrap,
        answers={f"<PREFIX>{p.prompt}</PREFIX>": p.canonical_solution for p in picked},
    )
    report = inf.run_suite(
        picked, chat(stub, "stub-chat"), chat=True, prompts=serving_prompts, max_workers=2
    )
    for result, p in zip(report.results, picked, strict=True):
        assert result.raw_output is not None
        if result.middle == p.canonical_solution:
            assert result.passed and result.well_formatted, result
    recovered = sum(
        r.middle == p.canonical_solution for r, p in zip(report.results, picked, strict=True)
    )
    assert recovered >= len(picked) - 2


def test_judge_consistent_biased_and_unreliable_judges(stub):
    stub.behave("stub-model", answers={"": "GOOD answer"}, wrap="prose")
    stub.behave("stub-base", answers={"": "plain answer"})
    model, base = chat(stub, "stub-model"), chat(stub, "stub-base")

    stub.behave("stub-judge", judge="prefer:GOOD")
    fair = j.run_suite(QUESTIONS, model, chat(stub, "stub-judge"), baseline=base, max_workers=3)
    summary = summarize(fair.items, rounds=500)
    assert summary.overall.win_rate.value == 1.0
    assert summary.position_bias.disagreement_rate == 0.0
    assert set(summary.per_category) == {q.category for q in QUESTIONS}

    stub.behave("stub-biased", judge="always:A>B")
    biased = j.run_suite(
        QUESTIONS, model, chat(stub, "stub-biased"), baseline_answers=fair.baseline_answers
    )
    summary = summarize(biased.items, rounds=500)
    assert (summary.overall.win_rate.value, summary.overall.tie_rate.value) == (0.5, 0.0)
    assert summary.position_bias.disagreement_rate == 1.0


def test_judge_malformed_then_valid_label_is_retried(stub):
    question = QUESTIONS[0]
    stub.behave("stub-judge", replies=["My verdict: [[A>>>B]]"], judge="prefer:GOOD")
    item = j.judge_question(chat(stub, "stub-judge"), question, "GOOD code", "other code")
    assert item.game1.attempts == 2 and item.game1.verdict is not None
    assert item.game2.attempts == 1
    assert item.judged.outcome == "won_both"


@pytest.mark.parametrize("rule", ["none", "conflict", "malformed"])
def test_judge_without_a_valid_label_scores_zero(stub, rule):
    stub.behave("stub-judge", judge=rule)
    item = j.judge_question(chat(stub, "stub-judge"), QUESTIONS[1], "a", "b")
    assert item.game1.verdict is None and item.game2.verdict is None
    assert (item.game1.attempts, item.game2.attempts) == (2, 2)
    assert item.judged.outcome == "won_none" and item.judged.ties == 0
    assert summarize([item], rounds=100).no_verdict_games == 2


def test_judge_timeout_then_answer(stub):
    stub.behave("stub-judge", replies=[None], judge="prefer:GOOD")
    item = j.judge_question(chat(stub, "stub-judge", timeout=0.3), QUESTIONS[2], "GOOD", "meh")
    assert item.game1.error.startswith("timeout") and item.game1.attempts == 2
    assert item.judged.outcome == "won_both"
