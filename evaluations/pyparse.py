"""`ast.parse` behind one lock.

CPython 3.11's AST-to-Python conversion tracks its recursion depth in state shared by all
threads (CPython gh-106905, fixed in later releases), so two threads parsing at once can fail
with "SystemError: AST constructor recursion depth mismatch". Samples are scored on threads
(the evaluation pool, the tests' thread pools); a parse takes microseconds, so one lock costs
nothing measurable.
"""

from __future__ import annotations

import ast
import threading

_lock = threading.Lock()


def parse(source: str) -> ast.Module:
    with _lock:
        return ast.parse(source)
