"""Which bootstrap rounds lose part of the Ford core, found without a graph search per round.

Computes, for a batch of resampled category counts, the rounds whose strongly connected core
is smaller than the full data's, and that round's core (see ``comparison_graph``). A redraw
can only remove battles, so beats-graph edges can only vanish and strongly connected parts
can only split: a round's core is the largest strongly connected part of the full-data core
in that round. An edge u -> v that vanishes cannot split anything while a detour
u -> w -> v survives; each edge gets the detour with the most battles, and only rounds that
lose an edge together with its detour get a full strong-connectivity test.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from analysis.bt_problem import BTProblem

__all__ = ["CoreCheck", "largest_part"]


class CoreCheck:
    """Finds rounds whose Ford core is smaller than the full data's (rare on big data)."""

    def __init__(self, prob: BTProblem, may_vanish: np.ndarray) -> None:
        """``may_vanish``: bool per category, True if a redraw can leave it at zero."""
        k = max(prob.k, 1)
        self.k = prob.k
        self.core = prob.core_local
        first, second = prob.pi[prob.cat_pair], prob.pj[prob.cat_pair]
        code = prob.cat_code
        src = np.concatenate([first[code != 2], second[code != 0]])
        dst = np.concatenate([second[code != 2], first[code != 0]])
        cat = np.concatenate([np.flatnonzero(code != 2), np.flatnonzero(code != 0)])
        inside = self.core[src] & self.core[dst] if prob.k else np.zeros(0, dtype=bool)
        ukey, edge = np.unique(src[inside] * k + dst[inside], return_inverse=True)
        self.src, self.dst = ukey // k, ukey % k  # sorted by src
        n_edges = len(ukey)
        self.map = csr_matrix(
            (np.ones(len(edge)), (edge, cat[inside])), shape=(n_edges, prob.n_categories)
        )
        # an edge can only vanish if every category behind it can be zero
        safe = np.asarray(self.map @ (~may_vanish).astype(float)) > 0
        self.watched = np.flatnonzero(~safe)
        self.watch = self.map[self.watched]
        self.detour = self._detours(prob)

    def _detours(self, prob: BTProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each watched edge u -> v: edges u -> w and w -> v maximising the smaller count."""
        k, n_w = self.k, len(self.watched)
        first, second, has = np.zeros(n_w, np.int64), np.zeros(n_w, np.int64), np.zeros(n_w, bool)
        if n_w == 0:
            return first, second, has
        support = np.zeros((k, k), dtype=np.float32)
        support[self.src, self.dst] = np.asarray(self.map @ prob.cat_count.astype(float))
        edge_id = np.full((k, k), -1, dtype=np.int64)
        edge_id[self.src, self.dst] = np.arange(len(self.src))
        support_t = np.ascontiguousarray(support.T)
        block = max(1, (1 << 22) // max(k, 1))
        for lo in range(0, n_w, block):
            e = self.watched[lo : lo + block]
            u, v = self.src[e], self.dst[e]
            score = support[u]
            np.minimum(score, support_t[v], out=score)
            w = score.argmax(axis=1)
            ok = score[np.arange(len(e)), w] > 0
            first[lo : lo + block] = np.where(ok, edge_id[u, w], 0)
            second[lo : lo + block] = np.where(ok, edge_id[w, v], 0)
            has[lo : lo + block] = ok
        return first, second, has

    def cores(self, prob: BTProblem, x: np.ndarray, n: np.ndarray) -> list[np.ndarray | None]:
        """Per round (columns of ``x``): None if the core is intact, else the round's core."""
        out: list[np.ndarray | None] = [None] * x.shape[1]
        if len(self.watched) == 0:
            return out
        live_w = np.asarray(self.watch @ x) > 0
        if live_w.all():
            return out
        live = np.ones((len(self.src), x.shape[1]), dtype=bool)
        live[self.watched] = live_w
        d1, d2, has = self.detour
        broken = ~live_w & ~(has[:, None] & live[d1] & live[d2])
        suspects = np.flatnonzero(broken.any(axis=0))
        core_idx = np.flatnonzero(self.core)
        for r in suspects:
            alive = live[:, r]
            src, dst = self.src[alive], self.dst[alive]
            indptr = np.searchsorted(src, np.arange(self.k + 1))
            graph = csr_matrix((np.ones(len(dst)), dst, indptr), shape=(self.k, self.k))
            _, labels = connected_components(graph, directed=True, connection="strong")
            lab = labels[core_idx]
            if np.all(lab == lab[0]):
                continue
            out[r] = largest_part(labels, core_idx, prob.pi, prob.pj, n[:, r], self.k)
        return out


def largest_part(
    labels: np.ndarray, members: np.ndarray, pi: np.ndarray, pj: np.ndarray, n: np.ndarray, k: int
) -> np.ndarray:
    """Core among ``members``: the part with most battles inside, then most models, then
    the lowest index; empty if no part has a battle inside."""
    member = np.zeros(k, dtype=bool)
    member[members] = True
    same = (labels[pi] == labels[pj]) & member[pi] & member[pj]
    n_lab = labels.max() + 1
    inside = np.bincount(labels[pi][same], weights=n[same], minlength=n_lab)
    size = np.bincount(labels[members], minlength=n_lab)
    first = np.full(n_lab, k, dtype=np.int64)
    np.minimum.at(first, labels[members], members)
    core = np.zeros(k, dtype=bool)
    ok = (size > 0) & (inside > 0)
    if ok.any():
        order = np.lexsort((first, -size, -inside))
        best = next(int(x) for x in order if ok[x])
        core[members[labels[members] == best]] = True
    return core
