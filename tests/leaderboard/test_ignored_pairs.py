"""Ignored pairs (leaderboard/ignored_pairs.py): hand-made logs and votes, counted here."""

from __future__ import annotations

import datetime as dt
import itertools
import random
from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalogue.models import ArenaModel
from ingest.models import CompletionLog, Privacy
from leaderboard import ignored_pairs, selectors
from tests.factories import ArenaModelFactory, BattleFactory

from .boards import publish_board

_ids = itertools.count()


def log(model: ArenaModel, *, pair_id: str, index: int | None, at: dt.datetime, **kw) -> None:
    CompletionLog.objects.create(
        completion_id=f"c{next(_ids)}",
        pair_id=pair_id,
        pair_index=index,
        model=model,
        privacy=Privacy.PRIVATE,
        received_at=at,
        **{"client_version": "1.2.7", **kw},
    )


@pytest.fixture
def arena(db):
    """Random pairs of four models (one a merged key) with the fates listed below; returns
    the publication time and each pair's (top, bottom, shown at, vote delay or None)."""
    now = timezone.now()
    ant = ArenaModelFactory(key="ant", display_name="Ant")
    bee = ArenaModelFactory(key="bee", display_name="Bee")
    cat = ArenaModelFactory(key="cat", display_name="Cat")
    bee_old = ArenaModelFactory(key="bee-old", merged_into=bee)
    rng = random.Random(11)
    pairs = []
    for n in range(160):
        top, bottom = rng.sample([ant, bee, cat, bee_old], 2)
        shown = now - dt.timedelta(minutes=rng.choice([5, 30, 59, 61, 90, 180, 600]))
        delay = rng.choice([None, None, 1, 30, 59, 61, 200])
        pid = f"p{n}"
        # The later of the two logs is when the pair was shown.
        log(top, pair_id=pid, index=0, at=shown - dt.timedelta(seconds=rng.choice([0, 3])))
        log(bottom, pair_id=pid, index=1, at=shown)
        if delay is not None:
            BattleFactory(
                pair_id=pid,
                model_a=top,
                model_b=bottom,
                received_at=shown + dt.timedelta(minutes=delay),
                excluded=rng.random() < 0.2,  # an excluded vote is still a vote
            )
        pairs.append((top.key, bottom.key, shown, delay))
    # Never shown: only the top log arrived; the server's own logs without the extension's;
    # logs without a pair id; a failed call outside the pair (no index).
    log(ant, pair_id="half", index=0, at=now - dt.timedelta(hours=5))
    log(
        ant,
        pair_id="served",
        index=0,
        at=now - dt.timedelta(hours=5),
        served_by_us=True,
        client_version="",
    )
    log(
        cat,
        pair_id="served",
        index=1,
        at=now - dt.timedelta(hours=5),
        served_by_us=True,
        client_version="",
    )
    log(ant, pair_id="", index=0, at=now - dt.timedelta(hours=5))
    log(cat, pair_id="", index=1, at=now - dt.timedelta(hours=5))
    log(cat, pair_id="p0", index=None, at=now - dt.timedelta(hours=5), succeeded=False)
    # Served here and logged by the extension too: counted, for Ant and Cat, and ignored.
    log(ant, pair_id="both", index=0, at=now - dt.timedelta(hours=5), served_by_us=True)
    log(cat, pair_id="both", index=1, at=now - dt.timedelta(hours=5), served_by_us=True)
    pairs.append(("ant", "cat", now - dt.timedelta(hours=5), None))
    publish_board(at=now, models=[ant, bee, cat])
    return now, pairs


def expected(now, pairs, window_minutes: int) -> tuple[Counter, Counter]:
    """Shown and ignored pairs per model (merged key as its model), counted one by one."""
    shown, ignored = Counter(), Counter()
    for top, bottom, at, delay in pairs:
        top, bottom = (k.replace("bee-old", "bee") for k in (top, bottom))
        if top == bottom or at + dt.timedelta(minutes=window_minutes) > now:
            continue
        for k in (top, bottom):
            shown[k] += 1
            if delay is None or delay > window_minutes:
                ignored[k] += 1
    return shown, ignored


@pytest.mark.parametrize("window", [60, 120])
def test_counts_match_a_count_done_here(arena, settings, window):
    now, pairs = arena
    settings.ARENA_IGNORED_WINDOW_MINUTES = window
    with CaptureQueriesContext(connection) as queries:
        summary = ignored_pairs.ignored_summary()
    log_queries = [q["sql"] for q in queries.captured_queries if "ingest_completionlog" in q["sql"]]
    assert len(log_queries) == 1 and "GROUP BY" in log_queries[0]
    shown, ignored = expected(now, pairs, window)
    assert min(shown.values()) > 20 and 0 < sum(ignored.values()) < sum(shown.values())
    for key in ("ant", "bee", "cat"):
        got = summary.model(key)
        assert (got["shown"], got["ignored"]) == (shown[key], ignored[key])
        assert got["rate"] == pytest.approx(ignored[key] / shown[key])
    # Each counted pair has two models: the arena's totals are half the per-model sums.
    assert summary.shown == sum(shown.values()) // 2
    assert summary.ignored == sum(ignored.values()) // 2
    assert summary.model("bee-old") is None  # counted for Bee
    # The ORM path the embedded SQLite takes counts the same.
    until = selectors.snapshot_published_at(snapshot_id=selectors.published_snapshot_id())
    span = dt.timedelta(minutes=window)
    assert sorted(ignored_pairs.pair_counts_portable(until=until, window=span)) == sorted(
        ignored_pairs.pair_counts(until=until, window=span)
    )


def test_window_not_elapsed_by_the_board_is_not_counted(arena, settings):
    now, pairs = arena
    settings.ARENA_IGNORED_WINDOW_MINUTES = 60
    # Measured at the board's publication: a board of an hour earlier saw fewer pairs.
    earlier = publish_board(at=now - dt.timedelta(hours=1), models=[])
    summary = ignored_pairs.ignored_summary(snapshot_id=earlier.pk)
    shown, ignored = expected(now - dt.timedelta(hours=1), pairs, 60)
    assert summary.model("ant")["shown"] == shown["ant"]
    assert summary.model("ant")["ignored"] == ignored["ant"]


def test_model_page_shows_the_rate_and_the_arena_average(client, arena, settings):
    now, pairs = arena
    settings.ARENA_IGNORED_WINDOW_MINUTES = 60
    shown, ignored = expected(now, pairs, 60)
    html = client.get("/models/cat/").content.decode()
    arena_rate = (sum(ignored.values()) / 2) / (sum(shown.values()) / 2)
    rate = ignored["cat"] / shown["cat"]
    assert (
        f"Developers ignored <strong>{round(rate * 100)}%</strong> of the {shown['cat']} pairs "
        f"it was shown in; arena average {round(arena_rate * 100)}%."
    ) in html
    assert 'id="ignored-explained"' in html and "within 60 minutes" in html
