"""Which models can be rated, and which ones make the Bradley-Terry MLE infinite.

Computes, from grouped counts, a :class:`GraphStructure`: the *main* part of the comparison
graph (the connected part holding most battles; only its models are rated), its *core* (the
largest strongly connected part of the directed "beats" graph, where an edge i -> j means i beat
j at least once and a tie counts in both directions) and one status code per model.

Ford's condition -- the beats graph is strongly connected -- is exactly what makes the MLE
finite and unique. When it fails, the models outside the core have no finite MLE: the fit gives
each of them one virtual tie against the average core model (see ``bradley_terry``).

Status codes (also in ``docs/ratings.md``):

``ok``              in the core: plain maximum-likelihood rating.
``unbounded_high``  beat its way into the core but never lost back to it: MLE is +infinity.
``unbounded_low``   the core beat it but it never beat its way back: MLE is -infinity.
``unbounded``       connected, but neither above nor below the core (or there is no core).
``disconnected``    has battles, but not in the main connected part: no comparable rating.
``no_battles``      listed but never played.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components

from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE, GroupedCounts

__all__ = [
    "RATED_STATUSES",
    "STATUS_DISCONNECTED",
    "STATUS_NO_BATTLES",
    "STATUS_OK",
    "STATUS_UNBOUNDED",
    "STATUS_UNBOUNDED_HIGH",
    "STATUS_UNBOUNDED_LOW",
    "GraphStructure",
    "analyse_graph",
    "beats_edges",
    "strong_core",
]

STATUS_OK = "ok"
STATUS_UNBOUNDED_HIGH = "unbounded_high"
STATUS_UNBOUNDED_LOW = "unbounded_low"
STATUS_UNBOUNDED = "unbounded"
STATUS_DISCONNECTED = "disconnected"
STATUS_NO_BATTLES = "no_battles"
RATED_STATUSES = frozenset(
    {STATUS_OK, STATUS_UNBOUNDED_HIGH, STATUS_UNBOUNDED_LOW, STATUS_UNBOUNDED}
)


@dataclass(frozen=True)
class GraphStructure:
    """Main component, core and per-model status of one set of grouped counts."""

    status: tuple[str, ...]
    main: np.ndarray  # bool per model: rated (in the main connected part)
    core: np.ndarray  # bool per model: in the largest strongly connected part of ``main``

    @property
    def ford_condition(self) -> bool:
        """True when every rated model is in the core (finite, unique MLE)."""
        return bool(self.main.any()) and bool(np.array_equal(self.main, self.core))


def beats_edges(a: np.ndarray, b: np.ndarray, outcome: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Directed edges (winner, loser) of the beats graph; a tie gives both directions."""
    src = np.concatenate(
        [
            a[outcome == OUTCOME_A],
            b[outcome == OUTCOME_B],
            a[outcome == OUTCOME_TIE],
            b[outcome == OUTCOME_TIE],
        ]
    )
    dst = np.concatenate(
        [
            b[outcome == OUTCOME_A],
            a[outcome == OUTCOME_B],
            b[outcome == OUTCOME_TIE],
            a[outcome == OUTCOME_TIE],
        ]
    )
    return src, dst


def _graph(k: int, src: np.ndarray, dst: np.ndarray) -> csr_matrix:
    return csr_matrix((np.ones(len(src)), (src, dst)), shape=(k, k))


def strong_core(
    k: int,
    src: np.ndarray,
    dst: np.ndarray,
    pair_i: np.ndarray,
    pair_j: np.ndarray,
    pair_n: np.ndarray,
    candidates: np.ndarray,
) -> np.ndarray:
    """Largest strongly connected part among ``candidates`` (bool mask over ``k`` models).

    "Largest" = most battles inside it, then most models, then lowest model index. A part
    with no battles inside (a single model) never counts: the core is then empty.
    """
    core = np.zeros(k, dtype=bool)
    if not candidates.any():
        return core
    _, labels = connected_components(_graph(k, src, dst), directed=True, connection="strong")
    same = labels[pair_i] == labels[pair_j]
    n_labels = labels.max() + 1
    inside = np.bincount(labels[pair_i][same], weights=pair_n[same], minlength=n_labels)
    idx = np.flatnonzero(candidates)
    lab = labels[idx]
    size = np.bincount(lab, minlength=n_labels)
    first = np.full(n_labels, k, dtype=np.int64)
    np.minimum.at(first, lab, idx)
    ok = (size > 0) & (inside > 0)
    if not ok.any():
        return core
    order = np.lexsort((first, -size, -inside))
    best = next(int(x) for x in order if ok[x])
    core[idx[lab == best]] = True
    return core


def _reachable(k: int, graph: csr_matrix, sources: np.ndarray) -> np.ndarray:
    """Bool mask of nodes reachable from any of ``sources`` (multi-source BFS)."""
    if len(sources) == 0:
        return np.zeros(k, dtype=bool)
    coo = graph.tocoo()
    src = np.concatenate([coo.row, np.full(len(sources), k)])
    dst = np.concatenate([coo.col, sources])
    g = _graph(k + 1, src, dst)
    order = breadth_first_order(g, k, directed=True, return_predecessors=False)
    mask = np.zeros(k + 1, dtype=bool)
    mask[order] = True
    return mask[:k]


def analyse_graph(counts: GroupedCounts) -> GraphStructure:
    """Main part, core and status codes (see the module docstring) for ``counts``."""
    k = counts.n_models
    a, b, o, c = counts.a, counts.b, counts.outcome, counts.count
    votes = counts.battles_per_model()
    main = np.zeros(k, dtype=bool)
    if len(c):
        und = _graph(k, a, b)
        _, comp = connected_components(und, directed=False)
        n_comp = comp.max() + 1
        battles = np.bincount(comp[a], weights=c, minlength=n_comp)
        played = votes > 0
        size = np.bincount(comp[played], minlength=n_comp)
        first = np.full(n_comp, k, dtype=np.int64)
        np.minimum.at(first, comp[played], np.flatnonzero(played))
        best = int(np.lexsort((first, -size, -battles))[0])
        main = (comp == best) & played

    src, dst = beats_edges(a, b, o)
    core = strong_core(k, src, dst, a, b, c.astype(float), main)

    status = np.full(k, STATUS_NO_BATTLES, dtype=object)
    status[votes > 0] = STATUS_DISCONNECTED
    status[main] = STATUS_UNBOUNDED
    if core.any() and np.array_equal(core, main):
        status[core] = STATUS_OK  # Ford's condition: nothing is unbounded
    elif core.any():
        beats = _graph(k, src, dst)
        below = _reachable(k, beats, np.flatnonzero(core))  # the core beats them (transitively)
        above = _reachable(k, beats.T.tocsr(), np.flatnonzero(core))  # they beat the core
        status[main & above & ~below] = STATUS_UNBOUNDED_HIGH
        status[main & below & ~above] = STATUS_UNBOUNDED_LOW
        status[core] = STATUS_OK
    return GraphStructure(status=tuple(status.tolist()), main=main, core=core)
