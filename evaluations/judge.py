"""The CodeArena judge: two games per question with the answer order swapped, scored strictly.

For each question the evaluated model answers the question as a single user message
(`answer_messages`), the baseline's answer comes from the question set or is generated once
and reused, and a judge model is asked twice (`judge_question`):

* game 1: the baseline's answer as Assistant A, the model's as Assistant B;
* game 2: the same two answers swapped.

The judging prompt (`judge_messages`, version `PROMPT_VERSION`) was written for this project
in the Arena-Hard style: the judge first writes its own answer to the question, then compares
both answers with it and with each other, and ends with exactly one label among ``[[A>>B]]``,
``[[A>B]]``, ``[[A=B]]``, ``[[B>A]]``, ``[[B>>A]]``. Labels are parsed by
``analysis.codearena.parse_verdict``: none, or two different ones, is no verdict. A game with
no verdict (or a failed judge call) is asked once more: after a reply without a verdict the
judge is shown its reply and asked for the label alone; after a failed call the same request
is sent again. A game still without a verdict is neither won nor tied.

Scores are ``analysis.codearena``'s, the seed's rule: a question scores the number of its two
games the model won, over 2 (a strong label counts like a weak one). `judge_stats.summarize`
turns judged questions into the CodeArena win and tie rates with bootstrap intervals and the
judge's position bias.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from analysis.codearena import (
    GameOutcome,
    JudgedQuestion,
    Verdict,
    game_outcome,
    game_score,
    parse_verdict,
)

from .calls import Call, ChatFn, Messages, call, map_items
from .questions import JudgeQuestion

PROMPT_VERSION = "codearena-judge-v1"
GENERATION = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 4096}
ANSWER_A = ("<|The Start of Assistant A's Answer|>", "<|The End of Assistant A's Answer|>")
ANSWER_B = ("<|The Start of Assistant B's Answer|>", "<|The End of Assistant B's Answer|>")
QUESTION = ("<|The Start of the User's Question|>", "<|The End of the User's Question|>")

JUDGE_SYSTEM = """\
You are an impartial judge of answers to programming questions. You will see a user's \
question and the answers of two assistants, A and B.

Work in this order:
1. Write your own answer to the question first: the code or explanation you would give.
2. Compare each assistant's answer with yours and with each other. Point out mistakes: code \
that would not run or gives wrong results, wrong statements, missing parts of what the user \
asked, and unsafe advice.
3. Weigh correctness first, then whether the answer does everything the user asked, then how \
useful and clear it is. A longer answer is not better for its length, and the order in which \
the answers are shown says nothing about their quality.

End your reply with your final verdict: exactly one of these labels, written once.
[[A>>B]] A is much better
[[A>B]] A is better
[[A=B]] both are about as good (or as bad)
[[B>A]] B is better
[[B>>A]] B is much better
Do not write any other label anywhere in your reply."""

RETRY_PROMPT = (
    "Your reply does not end with exactly one verdict label. Reply now with only your final "
    "verdict: one of [[A>>B]], [[A>B]], [[A=B]], [[B>A]], [[B>>A]]."
)


def answer_messages(question: JudgeQuestion) -> Messages:
    """What the evaluated model (and the baseline) is sent: the question alone."""
    return ({"role": "user", "content": question.question},)


def judge_messages(question: str, answer_a: str, answer_b: str) -> Messages:
    user = (
        f"{QUESTION[0]}\n{question}\n{QUESTION[1]}\n\n"
        f"{ANSWER_A[0]}\n{answer_a}\n{ANSWER_A[1]}\n\n"
        f"{ANSWER_B[0]}\n{answer_b}\n{ANSWER_B[1]}"
    )
    return ({"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user})


@dataclass(frozen=True)
class Game:
    """One judging of one ordering. ``judgments``: the judge's replies, one per attempt."""

    model_position: Literal["A", "B"]
    verdict: Verdict | None
    judgments: tuple[str, ...] = ()
    attempts: int = 1
    error: str | None = None  # the last failed call's error, if any
    latency_s: float = 0.0  # the judge's calls for this game, summed

    @property
    def score(self) -> int:
        """Arena-Hard's signed score of this game (+2 .. -2), kept as a secondary figure."""
        return game_score(self.verdict, model_position=self.model_position)

    @property
    def result(self) -> GameOutcome:
        """Won, tied or lost by the model, or no verdict (what the win rate counts)."""
        return game_outcome(self.verdict, model_position=self.model_position)


def judge_game(
    judge: ChatFn, question: str, answer_a: str, answer_b: str, *, model_position: Literal["A", "B"]
) -> Game:
    """Ask the judge about one ordering; retried once when there is no verdict."""
    messages = judge_messages(question, answer_a, answer_b)
    judgments: list[str] = []
    error: str | None = None
    first = call(judge, messages)
    if first.text is not None:
        judgments.append(first.text)
        verdict = parse_verdict(first.text)
        if verdict is not None:
            return Game(model_position, verdict, tuple(judgments), 1, latency_s=first.latency_s)
        retry: Messages = (
            *messages,
            {"role": "assistant", "content": first.text},
            {"role": "user", "content": RETRY_PROMPT},
        )
    else:
        error = first.error
        retry = messages
    second = call(judge, retry)
    latency = first.latency_s + second.latency_s
    if second.text is None:
        return Game(model_position, None, tuple(judgments), 2, second.error, latency)
    judgments.append(second.text)
    return Game(model_position, parse_verdict(second.text), tuple(judgments), 2, error, latency)


@dataclass(frozen=True)
class JudgedItem:
    """One question: the two answers, the two games (game 2 swapped), or why it failed."""

    question_id: str
    category: str | None
    model_answer: str | None
    baseline_answer: str | None
    game1: Game | None = None  # baseline = A, model = B
    game2: Game | None = None  # model = A, baseline = B
    error: str | None = None  # the model or the baseline gave no answer

    @property
    def judged(self) -> JudgedQuestion | None:
        """The pair of verdicts in ``analysis.codearena``'s form (None if not judged)."""
        if self.game1 is None or self.game2 is None:
            return None
        return JudgedQuestion(
            game1=self.game1.verdict,
            game2=self.game2.verdict,
            category=self.category,
            question_id=self.question_id,
        )


def judge_question(
    judge: ChatFn, question: JudgeQuestion, model_answer: str, baseline_answer: str
) -> JudgedItem:
    """Both games for one question (the model as B, then as A)."""
    game1 = judge_game(judge, question.question, baseline_answer, model_answer, model_position="B")
    game2 = judge_game(judge, question.question, model_answer, baseline_answer, model_position="A")
    return JudgedItem(
        question.question_id, question.category, model_answer, baseline_answer, game1, game2
    )


def answer(model: ChatFn, question: JudgeQuestion) -> Call:
    """The model's answer to a question (``text``, or ``error``), and how long it took."""
    return call(model, answer_messages(question))


@dataclass(frozen=True)
class JudgeRun:
    items: tuple[JudgedItem, ...]
    baseline_answers: dict[str, str] = field(default_factory=dict)  # to store and reuse


def run_suite(
    questions: Iterable[JudgeQuestion],
    model: ChatFn,
    judge: ChatFn,
    *,
    baseline: ChatFn | None = None,
    baseline_answers: Mapping[str, str] | None = None,
    max_workers: int = 4,
) -> JudgeRun:
    """Answer, then judge, every question. Baseline answers come from ``baseline_answers``,
    else from the question set, else from ``baseline`` (asked once per question)."""
    todo = list(questions)
    known = dict(baseline_answers or {})
    for q in todo:
        if q.question_id not in known and q.baseline_answer is not None:
            known[q.question_id] = q.baseline_answer
    missing = [q for q in todo if q.question_id not in known]
    if missing and baseline is None:
        raise ValueError(f"{len(missing)} questions have no baseline answer and no baseline model")
    errors: dict[str, str] = {}
    if baseline is not None:
        for q, reply in zip(
            missing,
            map_items(lambda q: answer(baseline, q), missing, max_workers=max_workers),
            strict=True,
        ):
            if reply.text is None:
                errors[q.question_id] = f"baseline: {reply.error}"
            else:
                known[q.question_id] = reply.text

    def one(q: JudgeQuestion) -> JudgedItem:
        base = known.get(q.question_id)
        if base is None:
            return JudgedItem(q.question_id, q.category, None, None, error=errors[q.question_id])
        reply = answer(model, q)
        if reply.text is None:
            return JudgedItem(q.question_id, q.category, None, base, error=f"model: {reply.error}")
        return judge_question(judge, q, reply.text, base)

    return JudgeRun(tuple(map_items(one, todo, max_workers=max_workers)), known)
