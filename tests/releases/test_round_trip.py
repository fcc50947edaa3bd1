"""A release reproduces its board: imported into a fresh arena (Parquet or JSONL) and
recomputed, it gives the board published for the same battles, within bootstrap noise."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from catalogue.models import ArenaModel
from ingest.models import Battle
from ingest.simulation import simulate
from leaderboard.models import RatingConfig, Snapshot, SnapshotRow
from leaderboard.recompute import recompute
from releases.services import ReleaseOptions, build_release, start_release

# Point estimates come from the same counts: equal up to the optimiser's tolerance. Interval
# ends are bootstrap percentiles over resampled voters, whose order differs between arenas.
RATING_TOLERANCE = 0.05
INTERVAL_NOISE = 0.25  # of the interval's width


@pytest.fixture
def arena(db, settings):
    config = RatingConfig.current()
    config.rounds, config.slice_rounds, config.slice_min_battles = 300, 20, 10**9
    config.save()
    settings.ARENA_CONTROLLED_MAX_BATTLES = 0
    simulate(battles=4000, seed=11)
    # Some votes came without a user id: they must stay user-less through the round trip.
    Battle.objects.filter(id__in=Battle.objects.order_by("id").values("id")[:300]).update(
        user_hash=""
    )


def published(snapshot_id: int) -> dict[str, tuple[float, float, float, int]]:
    rows = SnapshotRow.objects.filter(slice__snapshot_id=snapshot_id, slice__key="overall")
    return {
        r.model.key: (r.rating, r.ci_lower, r.ci_upper, r.votes)
        for r in rows.select_related("model")
    }


def assert_same_board(got: dict, want: dict) -> None:
    assert set(got) == set(want)
    for key, (rating, lower, upper, votes) in want.items():
        g_rating, g_lower, g_upper, g_votes = got[key]
        assert g_votes == votes, key
        assert abs(g_rating - rating) < RATING_TOLERANCE, key
        noise = INTERVAL_NOISE * (upper - lower)
        assert abs(g_lower - lower) < noise and abs(g_upper - upper) < noise, key


def test_release_imported_into_a_fresh_arena_reproduces_the_board(arena, release_dir):
    source = published(recompute(trigger="test", full=True).pk)
    release = build_release(
        release_id=start_release(
            options=ReleaseOptions(min_age_days=0, license="cc-by-4.0", include_simulated=True)
        ).pk
    )
    board = {
        m["model"]: (m["rating"], m["ci_lower"], m["ci_upper"], m["votes"])
        for m in release.board["models"]
    }
    assert release.counts["battles"] == 4000 and release.counts["userless"] == 300
    assert_same_board(board, source)

    for name in ("battles.parquet", "battles.jsonl.gz"):
        # A fresh arena: no battles, no models; the import adds the models it names.
        Battle.objects.all().delete()
        SnapshotRow.objects.all().delete()
        ArenaModel.objects.all().delete()
        out = io.StringIO()
        call_command(
            "import_battles",
            str(release_dir / release.version / name),
            "--add-unknown-models",
            "--quiet-progress",
            stdout=out,
        )
        assert "4000 imported" in out.getvalue(), out.getvalue()
        assert Battle.objects.filter(user_hash="").count() == 300
        call_command("recompute_leaderboard", "--full", stdout=out)  # as docs/data.md shows
        assert_same_board(published(Snapshot.objects.latest("pk").pk), board)
