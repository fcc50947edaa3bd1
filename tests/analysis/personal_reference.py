"""An independent, plain implementation of analysis.personal, for cross-checks and the benchmark.

The same method written the slow, obvious way: the objective summed battle row by battle row
(crowd rows carry their counts), maximised by scipy's L-BFGS one fit at a time, folds and the
interval-halving search as explicit loops. It shares no code with analysis.personal or the
engine it uses (no BTProblem, no GroupedCounts arithmetic).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize

SCALE = 400.0 / math.log(10.0)


def _rows(battles, weight):
    """(first, second, score of first, weight) rows; a tie is half a win."""
    out = []
    for a, b, outcome, count in battles:
        score = 1.0 if outcome == 0 else 0.0 if outcome == 1 else 0.5
        out.append((a, b, score, weight * count))
    return out


def fit(k, crowd, user, lam, l2):
    """theta maximising the weighted log-likelihood minus l2/2 |theta|^2.

    ``crowd``: (a, b, outcome, count) rows; ``user``: (a, b, outcome) votes.
    """
    n_crowd = sum(r[3] for r in crowd)
    rows = _rows(crowd, lam / n_crowd if n_crowd else 0.0)
    if user:
        rows += _rows([(a, b, o, 1) for a, b, o in user], (1.0 - lam) / len(user))
    a = np.array([r[0] for r in rows], dtype=int)
    b = np.array([r[1] for r in rows], dtype=int)
    y = np.array([r[2] for r in rows])
    w = np.array([r[3] for r in rows])

    def negative(theta):
        z = theta[a] - theta[b]
        p = 1.0 / (1.0 + np.exp(-z))
        ll = w * (y * np.log(p) + (1.0 - y) * np.log1p(-p))
        grad = np.zeros(k)
        np.add.at(grad, a, w * (y - p))
        np.add.at(grad, b, -w * (y - p))
        return -(ll.sum() - 0.5 * l2 * theta @ theta), -(grad - l2 * theta)

    res = minimize(
        negative, np.zeros(k), jac=True, method="BFGS", options={"gtol": 1e-12, "maxiter": 10000}
    )
    return res.x


def heldout_loss(k, crowd, votes, lam, l2, folds=5, block=5):
    total, lost = 0, 0.0
    for f in range(folds):
        test = [v for j, v in enumerate(votes) if (j // block) % folds == f]
        if not test:
            continue
        train = [v for j, v in enumerate(votes) if (j // block) % folds != f]
        theta = fit(k, crowd, train, lam, l2)
        for a, b, outcome in test:
            p = 1.0 / (1.0 + math.exp(-(theta[a] - theta[b])))
            y = 1.0 if outcome == 0 else 0.0 if outcome == 1 else 0.5
            lost -= y * math.log(p) + (1.0 - y) * math.log(1.0 - p)
            total += 1
    return lost / total


def search(k, crowd, votes, l2, steps=5):
    """The interval-halving search of analysis.personal, one fit at a time."""
    tried = {lam: heldout_loss(k, crowd, votes, lam, l2) for lam in (0.0, 1.0, 0.5)}
    best, lo, hi = 0.5, 0.0, 1.0
    for _ in range(steps):
        down, up = (lo + best) / 2, (best + hi) / 2
        tried[down] = heldout_loss(k, crowd, votes, down, l2)
        tried[up] = heldout_loss(k, crowd, votes, up, l2)
        if tried[best] <= tried[down] and tried[best] <= tried[up]:
            lo, hi = down, up
        elif tried[down] < tried[up]:
            hi, best = best, down
        else:
            lo, best = best, up
    lam = min(tried, key=lambda x: (tried[x], -x))
    return lam, tried[lam]


def ratings(theta, listed):
    th = np.asarray(theta)[listed]
    return 1000.0 + SCALE * (th - th.mean())
