"""Added votes that put a lower model above #1 (analysis.added_votes), each count checked by
an independent refit of the counts with those votes added, and one fewer for every rival."""

import numpy as np

from analysis.added_votes import overtake_cost
from analysis.bradley_terry import BTFit, fit_bt
from analysis.grouping import OUTCOME_A, GroupedCounts
from tests.analysis.robustness_exact import small_arena


def _rows(counts: GroupedCounts) -> list[tuple[str, str, int, int]]:
    return [
        (counts.models[a], counts.models[b], int(o), int(c))
        for a, b, o, c in zip(counts.a, counts.b, counts.outcome, counts.count, strict=True)
    ]


def _overtakes(counts: GroupedCounts, top: str, rival: str, votes: int) -> bool:
    from analysis.grouping import from_count_rows

    added = from_count_rows(
        [*_rows(counts), (rival, top, OUTCOME_A, votes)] if votes else _rows(counts)
    )
    fit = fit_bt(added)
    return bool(fit.rating[fit.models.index(rival)] > fit.rating[fit.models.index(top)] + 1e-6)


def _ranked(fit: BTFit) -> list[str]:
    ok = [m for i, m in enumerate(fit.models) if fit.status[i] == "ok"]
    return sorted(ok, key=lambda m: -fit.rating[fit.models.index(m)])


def test_small_arenas_match_a_refit_with_the_votes_added():
    rng = np.random.default_rng(7)
    checked = 0
    while checked < 40:
        counts = small_arena(rng)
        fit = fit_bt(counts)
        ranked = _ranked(fit)
        if len(ranked) < 3:
            continue
        top, below = ranked[0], ranked[1:]
        cost = overtake_cost(fit, top, below=below)
        met = {
            counts.models[x]
            for a, b in zip(counts.a, counts.b, strict=True)
            for x in (a, b)
            if top in (counts.models[a], counts.models[b])
        } - {top}
        assert cost.votes is not None and cost.challenger in met, cost
        checked += 1
        assert _overtakes(counts, top, cost.challenger, cost.votes), cost
        for rival in set(below) & met:  # one vote fewer is not enough for anyone
            assert not _overtakes(counts, top, rival, cost.votes - 1), (cost, rival)


def test_a_settled_lead_costs_more_than_a_close_one():
    def arena(wins: int) -> GroupedCounts:
        from analysis.grouping import from_count_rows

        return from_count_rows(
            [
                ("a", "b", OUTCOME_A, wins),
                ("b", "a", OUTCOME_A, 100 - wins),
                ("b", "c", OUTCOME_A, 60),
                ("c", "b", OUTCOME_A, 40),
                ("a", "c", OUTCOME_A, 70),
                ("c", "a", OUTCOME_A, 30),
            ]
        )

    close = overtake_cost(fit_bt(arena(52)), "a", below=["b", "c"])
    settled = overtake_cost(fit_bt(arena(80)), "a", below=["b", "c"])
    assert close.challenger == settled.challenger == "b"
    assert close.votes is not None and settled.votes is not None
    assert 0 < close.votes < settled.votes
