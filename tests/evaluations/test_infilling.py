"""HumanEval-infilling through the chat FiM path without Django: requests, clean-up, scores.

Pure (``-p no:django``). The fake model answers as the FiM prompt asks (``<CODE>`` + the
prefix's last line + the reference middle + the suffix's first line + ``</CODE>``), so the
clean-up has to recover the reference; where it does, the tests must pass.
"""

from __future__ import annotations

import pytest

from analysis.fim import STOP_WORDS, build_chat_prompt, trim_context
from analysis.fim_cleanup import clean_chat_completion
from evaluations import infilling as inf
from evaluations.calls import map_items

LIGHT = inf.load_problems("random-span-light")
SUBSET = LIGHT[::8]  # 21 problems


def fim_answer(problem: inf.InfillProblem, middle: str) -> str:
    last = problem.prompt.rsplit("\n", 1)[-1]
    first = problem.suffix.split("\n", 1)[0]
    return f"<CODE>{last}{middle}{first}</CODE>"


def test_requests_are_the_create_pair_chat_requests():
    for p in LIGHT:
        request = inf.build_request(p, chat=True)
        prefix, suffix = trim_context(p.prompt, p.suffix)
        assert (request.prefix, request.suffix) == (prefix, suffix)
        assert request.prompt == build_chat_prompt(prefix, suffix)
        assert request.prompt.stop == list(STOP_WORDS)


def test_native_requests_need_serving_prompts():
    with pytest.raises(NotImplementedError, match=r"serving\.prompts"):
        inf.build_request(LIGHT[0], chat=False)


def test_clean_up_is_analysis_fim_with_no_line_limit():
    p = LIGHT[3]
    raw = fim_answer(p, p.canonical_solution)
    middle = inf.CHAT_PROMPTS.clean_completion(
        raw, chat=True, prefix=p.prompt, suffix=p.suffix, max_lines=None
    )
    assert middle == clean_chat_completion(raw, prefix=p.prompt, suffix=p.suffix)


def test_reference_middles_recovered_by_the_clean_up_pass():
    def one(p: inf.InfillProblem) -> inf.InfillResult:
        return inf.score_completion(p, fim_answer(p, p.canonical_solution), chat=True)

    results = map_items(one, SUBSET, max_workers=2)
    recovered = [
        r for r, p in zip(results, SUBSET, strict=True) if r.middle == p.canonical_solution
    ]
    assert len(recovered) >= len(SUBSET) // 2  # the clean-up is meant to recover most
    assert all(r.passed and r.well_formatted for r in recovered)
    summary = inf.report(results)
    assert summary.pass_at_1 >= len(recovered) / len(SUBSET)


def test_a_wrong_middle_fails_and_prose_is_not_well_formatted():
    p = next(q for q in LIGHT if q.canonical_solution.strip())
    wrong = inf.score_completion(p, fim_answer(p, "\n    raise ValueError()\n"), chat=True)
    assert not wrong.passed
    prose = inf.score_completion(p, "I would write a loop here that returns the answer.", chat=True)
    assert not prose.well_formatted and not prose.passed
    assert "syntax" in prose.issues


def test_run_suite_counts_errors_apart_from_formatting():
    picked = SUBSET[:4]

    def complete(prompt):
        user = prompt.messages[-1]["content"]
        if picked[0].prompt in user:
            raise TimeoutError("slow")
        p = next(q for q in picked if f"<PREFIX>{q.prompt}</PREFIX>" in user)
        return fim_answer(p, p.canonical_solution)

    summary = inf.run_suite(picked, complete, chat=True, max_workers=2)
    assert summary.statuses.get(inf.PROVIDER_ERROR) == 1
    answered = [r for r in summary.results if r.middle is not None]
    assert len(answered) == 3
    assert summary.well_formatted_rate == sum(r.well_formatted for r in answered) / 3
    assert summary.pass_at_1 == sum(r.passed for r in summary.results) / 4


def test_prompt_fingerprint_follows_the_prompt():
    class Changed(inf.ChatFimPrompts):
        def completion_prompt(self, *, chat, prefix, suffix):
            built = super().completion_prompt(chat=chat, prefix=prefix, suffix=suffix)
            built.messages[0]["content"] += " Be brief."
            return built

    same = inf.prompt_fingerprint(chat=True)
    assert same == inf.prompt_fingerprint(chat=True) and len(same) == 12
    assert inf.prompt_fingerprint(chat=True, prompts=Changed()) != same


def test_program_is_prefix_middle_suffix_then_the_tests():
    p = LIGHT[0]
    program = inf.build_program(p, "MIDDLE")
    assert program.startswith(p.prompt + "MIDDLE" + p.suffix)
    assert program.rstrip().endswith(f"check({p.entry_point})")
