"""Slice labels for one battle's code context, computed once at ingest.

``label_context(file_type=..., prefix=..., suffix=...)`` returns a ``SliceLabels`` with:

* ``programming_language`` - canonical name from the editor's ``fileType``
  (``programming_language.PROGRAMMING_LANGUAGES``),
* ``natural_language``     - ISO 639-1 code of the comments/strings, or ``"unknown"``
  (``natural_language.NATURAL_LANGUAGES``),
* ``context_tokens``       - estimated tokens of prefix + suffix (UTF-8 bytes / 4),
* ``context_bucket``       - one of ``context_length.CONTEXT_BUCKETS``,
* ``task_type``            - one of ``task_type.TASK_TYPES`` (rule-based by default).

``LABELER_VERSION`` changes whenever any labeller's output may change; store it next to
the labels so a back-fill can find stale rows. It is made of the per-label versions, so
a back-fill can also tell *which* label is stale.

Each label lives in its own module and can be called alone. Nothing here imports
Django; lingua is imported lazily on the first natural-language detection.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from analysis.labels import context_length, natural_language, programming_language, task_type
from analysis.labels.context_length import (
    CONTEXT_BUCKETS,
    context_bucket,
    context_tokens,
    estimate_tokens,
)
from analysis.labels.natural_language import (
    NATURAL_LANGUAGES,
    UNKNOWN,
    detect_natural_language,
)
from analysis.labels.programming_language import (
    OTHER,
    PROGRAMMING_LANGUAGES,
    normalize_language,
)
from analysis.labels.task_type import (
    TASK_TYPES,
    RuleBasedTaskTypeClassifier,
    TaskTypeClassifier,
    classify_task_type,
    default_task_type_classifier,
)

LABELER_VERSION = (
    f"pl{programming_language.VERSION}.nl{natural_language.VERSION}"
    f".ctx{context_length.VERSION}.task{task_type.VERSION}"
)
"""Version of the whole labeller, e.g. ``"pl1.nl1.ctx1.task1"``."""

__all__ = [
    "CONTEXT_BUCKETS",
    "LABELER_VERSION",
    "NATURAL_LANGUAGES",
    "OTHER",
    "PROGRAMMING_LANGUAGES",
    "TASK_TYPES",
    "UNKNOWN",
    "RuleBasedTaskTypeClassifier",
    "SliceLabels",
    "TaskTypeClassifier",
    "classify_task_type",
    "context_bucket",
    "context_tokens",
    "detect_natural_language",
    "estimate_tokens",
    "label_context",
    "normalize_language",
]


@dataclass(frozen=True)
class SliceLabels:
    """All slice labels of one battle's context."""

    programming_language: str
    natural_language: str
    context_tokens: int
    context_bucket: str
    task_type: str

    def as_dict(self) -> dict[str, str | int]:
        return asdict(self)


def label_context(
    *,
    file_type: str | None,
    prefix: str,
    suffix: str,
    task_classifier: TaskTypeClassifier | None = None,
) -> SliceLabels:
    """Compute every slice label for one context.

    ``prefix``/``suffix`` may be empty (privacy modes drop the code; then the language
    is "unknown", the bucket "<1k" and the task type usually "other"). Pass
    ``task_classifier`` to use another task-type labeller (e.g. an LLM) with the same
    call signature; the default is the rule-based one. Never raises on odd input.
    """
    prefix = prefix or ""
    suffix = suffix or ""
    language = normalize_language(file_type)
    tokens = context_tokens(prefix=prefix, suffix=suffix)
    classifier = task_classifier or default_task_type_classifier
    return SliceLabels(
        programming_language=language,
        natural_language=detect_natural_language(
            prefix=prefix, suffix=suffix, programming_language=language
        ),
        context_tokens=tokens,
        context_bucket=context_bucket(tokens),
        task_type=classifier(programming_language=language, prefix=prefix, suffix=suffix),
    )
