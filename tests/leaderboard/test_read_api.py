"""GET /api/v1/leaderboard (JSON and CSV) and /api/v1/categories, cached per snapshot."""

from __future__ import annotations

import csv
import io

from leaderboard.recompute import recompute


def test_no_board_yet_is_404(api, db):
    r = api.get("/api/v1/leaderboard")
    assert r.status_code == 404
    assert "No leaderboard" in r.json()["message"]


def test_leaderboard_json_shape(api, simulated):
    snap = recompute(trigger="test")
    r = api.get("/api/v1/leaderboard")
    assert r.status_code == 200
    body = r.json()
    assert body["snapshot"]["id"] == snap.pk and body["snapshot"]["battles"] == 6000
    assert body["snapshot"]["method"] == "bootstrap"
    first = body["models"][0]
    for field in ("model", "display_name", "rating", "ci_lower", "ci_upper", "rank", "votes"):
        assert field in first
    ratings = [m["rating"] for m in body["models"]]
    assert ratings == sorted(ratings, reverse=True) or [
        m["rank"] for m in body["models"]
    ] == sorted(m["rank"] for m in body["models"])
    assert all(m["ci_lower"] <= m["rating"] <= m["ci_upper"] for m in body["models"])


def test_leaderboard_csv_matches_json(api, simulated):
    recompute(trigger="test")
    js = api.get("/api/v1/leaderboard?category=language:python").json()
    r = api.get("/api/v1/leaderboard?category=language:python&format=csv")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.content.decode())))
    assert [row["model"] for row in rows] == [m["model"] for m in js["models"]]
    assert float(rows[0]["rating"]) == js["models"][0]["rating"]


def test_unknown_category_and_format(api, simulated):
    recompute(trigger="test")
    r = api.get("/api/v1/leaderboard?category=language:klingon")
    assert r.status_code == 404 and "Unknown category" in r.json()["message"]
    r = api.get("/api/v1/leaderboard?format=xml")
    assert r.status_code == 404 and "json or csv" in r.json()["message"]


def test_categories_lists_dimensions(api, simulated):
    recompute(trigger="test")
    body = api.get("/api/v1/categories").json()
    dims = {c["dimension"] for c in body["categories"]}
    assert dims == {
        "overall",
        "kind",
        "language",
        "task_type",
        "context_bucket",
        "natural_language",
    }
    overall = next(c for c in body["categories"] if c["key"] == "overall")
    assert overall["battles"] == 6000


def test_cache_is_invalidated_by_a_new_snapshot(api, simulated):
    from ingest.models import Battle

    recompute(trigger="test")
    assert api.get("/api/v1/leaderboard").json()["snapshot"]["battles"] == 6000
    Battle.objects.filter(pk__in=Battle.objects.values("pk")[:10]).update(excluded=True)
    # cached response is served until a new snapshot is published ...
    assert api.get("/api/v1/leaderboard").json()["snapshot"]["battles"] == 6000
    recompute(trigger="test")
    # ... and not a moment after
    assert api.get("/api/v1/leaderboard").json()["snapshot"]["battles"] == 5990
