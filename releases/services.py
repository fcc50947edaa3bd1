"""Making a release: choose its battles, write its files, store them, record what it holds.

`start_release` records the release and its options (status building); `build_release`
writes the files in a private staging directory, then saves them to the "releases" storage
(a directory the web server serves, or an object store) under `version/`. A failed build
records its error and leaves no files in the storage.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from django.core.files import File
from django.core.files.storage import storages
from django.db import IntegrityError, transaction
from django.utils import timezone

from analysis.grouping import OUTCOME_A, OUTCOME_B, OUTCOME_TIE
from core.audit import Actor, record

from . import selectors
from .board import NO_USER, release_board
from .card import finish
from .models import DatasetRelease, version_validator
from .rows import RowMaker, release_key
from .writers import ReleaseWriter

# Wraps the row iterator, e.g. with a progress bar (the command's tqdm).
Progress = Callable[[Iterable[Any]], Iterable[Any]]

log = logging.getLogger(__name__)
ENGINE_OUTCOME = {
    "model_a": OUTCOME_A,
    "model_b": OUTCOME_B,
    "tie": OUTCOME_TIE,
    "both_bad": OUTCOME_TIE,
}


@dataclass(frozen=True)
class ReleaseOptions:
    min_age_days: int
    license: str
    stable_ids: bool = False
    include_simulated: bool = False
    include_excluded: bool = False
    on_secret: str = DatasetRelease.OnSecret.REDACT
    version: str = ""  # default: the cut-off's date (with .2, .3 ... when taken)


def start_release(*, options: ReleaseOptions, actor: Actor = None) -> DatasetRelease:
    """Record a new release (status building) with its cut-off: now less the minimum age."""
    if options.version:
        version_validator(options.version)
    cutoff = timezone.now() - timedelta(days=options.min_age_days)
    base = options.version or cutoff.date().isoformat()
    fields = {
        "cutoff": cutoff,
        "license": options.license,
        "min_age_days": options.min_age_days,
        "stable_ids": options.stable_ids,
        "include_simulated": options.include_simulated,
        "include_excluded": options.include_excluded,
        "on_secret": options.on_secret,
    }
    for n in range(1, 100):
        version = base if n == 1 else f"{base}.{n}"
        if DatasetRelease.objects.filter(version=version).exists():
            if options.version:
                raise ValueError(f"version {options.version!r} exists already")
            continue
        try:
            with transaction.atomic():
                release = DatasetRelease.objects.create(version=version, **fields)
                record(
                    actor=actor,
                    action="start_release",
                    target=version,
                    after=fields | {"cutoff": cutoff.isoformat()},
                )
            return release
        except IntegrityError:
            continue  # another release took this version meanwhile
    raise ValueError(f"no free version after {base}")


@dataclass
class _Battles:
    """What the board needs of each released battle, gathered while the rows are written."""

    models: dict[str, int]
    users: dict[str, int]
    a: list[int]
    b: list[int]
    outcome: list[int]
    user: list[int]
    probability: list[float]
    day: list[int]

    def add(self, row: dict[str, Any]) -> None:
        self.a.append(self.models.setdefault(row["model_a"], len(self.models)))
        self.b.append(self.models.setdefault(row["model_b"], len(self.models)))
        self.outcome.append(ENGINE_OUTCOME[row["winner"]])
        pseudonym = row["user_hash"]
        self.user.append(
            NO_USER if pseudonym is None else self.users.setdefault(pseudonym, len(self.users))
        )
        p = row["pair_probability"]
        self.probability.append(np.nan if p is None else p)
        self.day.append(int(row["tstamp"] // 86_400))

    def board(self) -> dict[str, Any]:
        return release_board(
            models=list(self.models),
            a=np.array(self.a, dtype=np.int64),
            b=np.array(self.b, dtype=np.int64),
            outcome=np.array(self.outcome, dtype=np.int64),
            user=np.array(self.user, dtype=np.int64),
            pair_probability=np.array(self.probability, dtype=float),
            day=np.array(self.day, dtype=np.int64),
        )


def _write(
    release: DatasetRelease, directory: Path, progress: Progress
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Write the data files of `release` into `directory`; the counts and the board."""
    keys = selectors.release_keys()
    maker = RowMaker(
        key=release_key(stable=release.stable_ids),
        model_keys=keys,
        drop_flagged=release.on_secret == DatasetRelease.OnSecret.DROP,
    )
    battles = _Battles({}, {}, [], [], [], [], [], [])
    unreleased_models = same_model = 0
    first = last = None
    with ReleaseWriter(directory) as writer:
        for b in progress(selectors.battle_rows(release=release)):
            a_key, b_key = keys.get(b["model_a_id"]), keys.get(b["model_b_id"])
            if a_key is None or b_key is None:
                unreleased_models += 1
                continue
            if a_key == b_key:
                same_model += 1  # two keys merged into one model: on no board
                continue
            row = maker.row(b)
            if row is None:
                continue
            writer.add(row)
            battles.add(row)
            first = first or b["received_at"]
            last = b["received_at"]
    left_out = selectors.left_out(release=release) | {
        "models not shown on the board (private or hidden)": unreleased_models,
        "battles between two keys of one model": same_model,
    }
    if release.on_secret == DatasetRelease.OnSecret.DROP:
        left_out["flagged by the secret scan"] = maker.flagged_rows
    counts = {
        "battles": len(battles.a),
        "users": len(battles.users),
        "userless": battles.user.count(NO_USER),
        "models": len(battles.models),
        "with_code": maker.with_code,
        "research_rows": maker.research_rows,
        "secret_flagged": maker.flagged_rows,
        "secret_kinds": dict(maker.flagged_kinds),
        "left_out": {k.replace("_", " "): v for k, v in left_out.items() if v},
        "first": first.date().isoformat() if first else None,
        "last": last.date().isoformat() if last else None,
        "rows": writer.rows,
    }
    return counts, battles.board()


def build_release(*, release_id: int, progress: Progress = lambda rows: rows) -> DatasetRelease:
    """Write, store and record release `release_id`; on failure record the error, re-raise."""
    release = DatasetRelease.objects.get(pk=release_id)
    started = time.perf_counter()
    storage = storages["releases"]
    stored: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix=f"release-{release.version}-") as tmp:
            directory = Path(tmp)
            release.counts, release.board = _write(release, directory, progress)
            files = finish(release, directory, release.counts.pop("rows"))
            for entry in files:
                name = f"{release.version}/{entry['name']}"
                if storage.exists(name):
                    storage.delete(name)  # a failed build's leftovers: same name, new content
                with open(directory / entry["name"], "rb") as f:
                    stored.append(storage.save(name, File(f)))
    except Exception as exc:
        for name in stored:
            storage.delete(name)
        DatasetRelease.objects.filter(pk=release.pk).update(
            status=DatasetRelease.Status.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:2000],
            finished_at=timezone.now(),
            seconds=time.perf_counter() - started,
        )
        log.exception("Dataset release %s failed", release.version)
        raise
    release.files = files
    release.size_bytes = sum(f["bytes"] for f in files)
    release.status = DatasetRelease.Status.READY
    release.finished_at = timezone.now()
    release.seconds = time.perf_counter() - started
    release.error = ""
    release.save()
    log.info(
        "Dataset release %s: %s battles, %s bytes, %.1f s",
        release.version,
        release.counts["battles"],
        release.size_bytes,
        release.seconds,
    )
    return release


def set_public(
    *, releases: Iterable[DatasetRelease], public: bool, actor: Actor, reason: str
) -> int:
    """List releases on /data/ or withdraw them (the files stay in the storage), audited."""
    n = 0
    for release in releases:
        if release.public != public:
            DatasetRelease.objects.filter(pk=release.pk).update(public=public)
            record(
                actor=actor,
                action="publish_release" if public else "withdraw_release",
                target=release.version,
                reason=reason,
                before={"public": release.public},
                after={"public": public},
            )
            n += 1
    return n


def delete_release(*, release: DatasetRelease, actor: Actor) -> None:
    """Delete a release's files from the storage and its record (audited)."""
    storage = storages["releases"]
    for entry in release.files:
        storage.delete(f"{release.version}/{entry['name']}")
    record(
        actor=actor,
        action="delete_release",
        target=release.version,
        before={"files": [f["name"] for f in release.files], "counts": release.counts},
    )
    release.delete()
