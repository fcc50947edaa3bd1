"""Context-length slice label: estimated tokens in prefix + suffix, and its bucket.

The estimate is ``ceil(utf8_bytes / 4)``, the usual "about four bytes of English or code
per BPE token" rule. Counting UTF-8 bytes rather than characters keeps the estimate
honest for non-Latin text (a CJK character is three bytes and often one or more tokens),
and costs microseconds even on 100 KB. It is an estimate: real tokenizers differ by model
(code with deep indentation tokenizes denser, minified JS sparser), but the bucket
edges are a factor of four apart, so the estimate rarely moves a battle across buckets
for a reason that matters.

Buckets (k = 1,000 tokens): ``"<1k"`` below 1,000; ``"1-4k"`` from 1,000 to below 4,000;
``"4-16k"`` from 4,000 to below 16,000; ``">16k"`` from 16,000 up.

Note: analysis/fim.py may use its own token estimate; the two are to be reconciled.
"""

from __future__ import annotations

# Bump when the estimate or the bucket edges change.
VERSION = "1"

BYTES_PER_TOKEN = 4

CONTEXT_BUCKETS: tuple[str, ...] = ("<1k", "1-4k", "4-16k", ">16k")
"""Bucket labels, shortest contexts first."""

_BUCKET_UPPER_EDGES: tuple[tuple[int, str], ...] = (
    (1_000, "<1k"),
    (4_000, "1-4k"),
    (16_000, "4-16k"),
)


def estimate_tokens(text: str) -> int:
    """Estimated token count of ``text``: UTF-8 bytes / 4, rounded up."""
    # errors="surrogatepass": editors can send lone surrogates; never fail on them.
    n_bytes = len(text.encode("utf-8", errors="surrogatepass"))
    return -(-n_bytes // BYTES_PER_TOKEN)


def context_tokens(*, prefix: str, suffix: str) -> int:
    """Estimated tokens of the whole context the models saw (prefix + suffix)."""
    return estimate_tokens(prefix) + estimate_tokens(suffix)


def context_bucket(tokens: int) -> str:
    """Bucket label for a token count (see module docstring for the edges)."""
    if tokens < 0:
        raise ValueError(f"token count must be >= 0, got {tokens}")
    for upper, label in _BUCKET_UPPER_EDGES:
        if tokens < upper:
            return label
    return CONTEXT_BUCKETS[-1]
