"""Benchmark: the pure functions whose speed the test suite used to assert with timers.

Timed assertions fail on a busy machine (issue 12), so the suite now checks what bounds
the cost (the labellers scan fixed windows; tests/analysis/test_labels.py) and the
timings live here, side by side with a reference in the same run:

* all slice labels of a 100 KB context against a 25 KB one (the windows make the ratio ~1),
* `estimate_tokens` on 54 kB of ASCII against `len()` of its UTF-8 encoding,
* the 50-model pair latency matrix and pair distribution against the 10-model one.

Prints medians (ms or µs) and ratios with the machine and date.

    .venv/bin/python benchmarks/bench_hot_functions.py [--runs 9]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analysis.fim import estimate_tokens  # noqa: E402
from analysis.labels import label_context  # noqa: E402
from analysis.latency import LogNormalFit, pair_distribution, pair_latency_matrix  # noqa: E402
from tests.analysis.data.sample_battles import load_sample_battles  # noqa: E402


def median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm-up (lingua loads its models on first use)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def context(n_chars: int) -> tuple[str, str]:
    battles = sorted(load_sample_battles(), key=lambda b: -len(b.prefix))
    text = ""
    for b in battles:
        text += b.prefix + "\n"
        if len(text) >= n_chars:
            break
    return text[:n_chars], battles[0].suffix[:4000]


def latency_work(n_models: int) -> Callable[[], object]:
    fits = [LogNormalFit(float(m), 0.5) for m in np.linspace(-1, 1, n_models)]

    def run() -> object:
        lat = pair_latency_matrix(fits)
        return pair_distribution(lat.expected, tau=0.5, floor=0.2)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    runs = parser.parse_args().runs
    print(f"{platform.node()} · {os.cpu_count()} cores · {dt.date.today()} · median of {runs}")
    big, suffix = context(100_000)
    small, _ = context(25_000)
    t_big = median_ms(
        lambda: label_context(file_type="typescript", prefix=big, suffix=suffix), runs
    )
    t_small = median_ms(
        lambda: label_context(file_type="typescript", prefix=small, suffix=suffix), runs
    )
    print(f"labels 100 KB {t_big:.2f} ms, 25 KB {t_small:.2f} ms, ratio {t_big / t_small:.2f}")
    text = "def f(x):\n    return x + 1\n" * 2000
    t_est = median_ms(lambda: [estimate_tokens(text) for _ in range(200)], runs) * 5
    t_len = median_ms(lambda: [len(text.encode()) for _ in range(200)], runs) * 5
    print(
        f"estimate_tokens 54 kB {t_est:.2f} µs, len(encode) {t_len:.2f} µs, ratio {t_est / t_len:.2f}"
    )
    t50 = median_ms(latency_work(50), runs)
    t10 = median_ms(latency_work(10), runs)
    print(
        f"pair latency + distribution 50 models {t50:.2f} ms, 10 models {t10:.2f} ms, ratio {t50 / t10:.1f}"
    )


if __name__ == "__main__":
    main()
