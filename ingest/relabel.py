"""Back-fill of slice labels after the labeller changed (analysis.labels.LABELER_VERSION).

Which labels can be recomputed depends on what was stored:

* Battles with stored code (privacy ``Research``, a ``CodeContext`` row): every label is
  recomputed from the prefix, suffix and file type, exactly as at ingest
  (``ingest.labelling.label_columns``), and ``labeler_version`` becomes the current one.
* Every other battle (``Private`` / ``Debug``): the code was used in memory at ingest and
  then dropped, so only the programming language (from ``file_type``, which is stored) can
  be recomputed. The content-based labels (natural language, context tokens and bucket,
  task type) keep their ingest-time values. ``labeler_version`` records exactly that: the
  current ``pl`` part with the ``nl``/``ctx``/``task`` parts the battle already had (``0``
  when they were never recorded), so a later run does not pick the battle up again until the
  programming-language labeller changes once more.

Work is done in chunks of battles in id order (one transaction and one ``bulk_update`` per
chunk), so a run can be interrupted and resumed, and memory stays flat on large tables.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet

from analysis.labels import LABELER_VERSION, normalize_language
from analysis.labels import programming_language as _pl

from .labelling import LABEL_COLUMNS, label_columns
from .models import Battle, CodeContext

_VERSION = re.compile(r"^pl(?P<pl>[^.]*)\.nl(?P<nl>[^.]*)\.ctx(?P<ctx>[^.]*)\.task(?P<task>[^.]*)$")
PL_PREFIX = f"pl{_pl.VERSION}."


@dataclass
class RelabelReport:
    examined: int = 0
    from_code: int = 0
    from_file_type: int = 0
    changed: int = 0  # battles whose label values (not only the version) changed
    chunks: int = 0
    seconds: float = 0.0


def file_type_version(old: str) -> str:
    """Version string of a battle relabelled from its file type alone (see module docstring)."""
    match = _VERSION.match(old or "")
    parts = match.groupdict() if match else {"nl": "0", "ctx": "0", "task": "0"}
    return f"pl{_pl.VERSION}.nl{parts['nl']}.ctx{parts['ctx']}.task{parts['task']}"


def stale_battles() -> QuerySet[Battle]:
    """Battles whose labels an up-to-date labeller could change."""
    with_code = Q(code__isnull=False) & ~Q(labeler_version=LABELER_VERSION)
    # Without code only the language can be redone: stale when its part is outdated.
    without_code = Q(code__isnull=True) & ~Q(labeler_version__startswith=PL_PREFIX)
    return Battle.objects.filter(with_code | without_code)


def _labels_from_code(battle: Battle, code: CodeContext) -> dict[str, Any]:
    return label_columns(file_type=battle.file_type, prefix=code.prefix, suffix=code.suffix)


def _labels_from_file_type(battle: Battle) -> dict[str, Any]:
    return {
        "language": normalize_language(battle.file_type),
        "labeler_version": file_type_version(battle.labeler_version),
    }


def relabel_stale_battles(
    *,
    chunk_size: int = 500,
    limit: int | None = None,
    on_chunk: Callable[[RelabelReport], None] | None = None,
) -> RelabelReport:
    """Relabel every stale battle (at most ``limit``), ``chunk_size`` battles per transaction."""
    if chunk_size < 1:
        raise ValueError("chunk_size must be at least 1")
    started = time.perf_counter()
    report = RelabelReport()
    last_id = 0
    while limit is None or report.examined < limit:
        size = chunk_size if limit is None else min(chunk_size, limit - report.examined)
        ids = list(
            stale_battles()
            .filter(id__gt=last_id)
            .order_by("id")
            .values_list("id", flat=True)[:size]
        )
        if not ids:
            break
        last_id = ids[-1]
        with transaction.atomic():
            # Lock the chunk: a concurrent moderation edit of these rows waits for us.
            battles = list(
                Battle.objects.select_for_update()
                .filter(id__in=ids)
                .only("id", "file_type", *LABEL_COLUMNS)
                .order_by("id")
            )
            codes = {
                c.battle_id: c
                for c in CodeContext.objects.filter(battle_id__in=ids).only(
                    "battle_id", "prefix", "suffix"
                )
            }
            for battle in battles:
                code = codes.get(battle.pk)
                if code is not None:
                    new = _labels_from_code(battle, code)
                    report.from_code += 1
                else:
                    new = _labels_from_file_type(battle)
                    report.from_file_type += 1
                if any(getattr(battle, k) != v for k, v in new.items() if k != "labeler_version"):
                    report.changed += 1
                for field, value in new.items():
                    setattr(battle, field, value)
            Battle.objects.bulk_update(battles, LABEL_COLUMNS, batch_size=chunk_size)
        report.examined += len(battles)
        report.chunks += 1
        if on_chunk is not None:
            on_chunk(report)
    report.seconds = time.perf_counter() - started
    return report
