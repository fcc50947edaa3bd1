"""Scripted stub answers for the evaluation runs' tests: right, wrong and hostile models."""

from __future__ import annotations

from evaluations import humaneval as he
from evaluations import infilling as inf

HUMANEVAL = he.load_problems()
LIGHT = inf.load_problems("random-span-light")


def marker(problem: he.Problem) -> str:
    """A piece of the request that names the problem (the end of its prompt)."""
    return problem.prompt.rstrip()[-200:]


def humaneval_answers(bodies: dict[int, str | None]) -> dict[str, str]:
    """Answers per problem index: a body to put under the prompt's signature, or None for the
    canonical solution. Problems not listed get the stub's default answer (no function)."""
    out = {}
    for index, body in bodies.items():
        p = HUMANEVAL[index]
        out[marker(p)] = p.prompt + (p.canonical_solution if body is None else body)
    return out


def infill_answers(middles: dict[int, str | None], *, native: bool = False) -> dict[str, str]:
    """Middles per random-span-light problem index (None: the reference middle). The stub
    finds chat requests by their ``<PREFIX>`` section, native ones by prefix + suffix."""
    out = {}
    for index, middle in middles.items():
        p = LIGHT[index]
        key = p.prompt + p.suffix if native else f"<PREFIX>{p.prompt}</PREFIX>"
        out[key] = p.canonical_solution if middle is None else middle
    return out
