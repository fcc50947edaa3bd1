"""The controlled overall board: recompute on simulated battles with known length, latency and
position effects recovers them within their intervals, agrees with a direct fit of the same
battles, and the page, methodology and read API show it."""

from __future__ import annotations

import numpy as np
import pytest
from django.test import override_settings

from analysis.contextual import fit_contextual
from analysis.scale import SCALE
from analysis.simulate_context import simulate_contextual
from ingest.models import Battle, BattleKind, BattleSource, Privacy
from leaderboard.models import SnapshotRow, SnapshotSlice
from leaderboard.recompute import recompute
from leaderboard.selectors import board
from tests.factories import ArenaModelFactory

RATINGS = np.linspace(900.0, 1100.0, 6)
COEF = {"top": 1.2, "length": 0.8, "latency": -0.6, "slow_top": 0.3}
BASE = ("top", "length", "latency", "slow_top")
N = 12_000


@pytest.fixture
def arena(fast_config):
    """Simulated battles stored as real rows: lengths and latencies rebuilt from the features
    (length x = (t - b) / (t + b) with b = 10,000 characters; latency from its ratio and the
    slower side's log latency)."""
    sim = simulate_contextual(RATINGS, N, coef=COEF, seed=3, n_users=300)
    ids = {key: ArenaModelFactory(key=key).pk for key in sim.models}
    f = {name: sim.features[:, sim.feature_names.index(name)] for name in BASE}
    bottom_chars = 10_000
    top_chars = np.rint(bottom_chars * (1 + f["length"]) / (1 - f["length"])).astype(int)
    slower = np.exp(f["slow_top"]) * 1000.0  # ms; the median shift cancels in the centring
    ratio = (1 + f["latency"]) / (1 - f["latency"])  # top / bottom
    lat_top = np.where(ratio >= 1, slower, slower * ratio)
    lat_bottom = np.where(ratio >= 1, slower / ratio, slower)
    Battle.objects.bulk_create(
        [
            Battle(
                pair_id=f"ctl-{i}",
                user_hash=f"{int(sim.user[i]):064x}",
                model_a_id=ids[sim.models[sim.a[i]]],
                model_b_id=ids[sim.models[sim.b[i]]],
                outcome=int(sim.outcome[i]),
                kind=BattleKind.COMPLETION,
                privacy=Privacy.PRIVATE,
                source=BattleSource.API,
                content_hash=f"{i:064x}",
                completion_a_chars=int(top_chars[i]),
                completion_b_chars=bottom_chars,
                latency_a_ms=float(lat_top[i]),
                latency_b_ms=float(lat_bottom[i]),
            )
            for i in range(N)
        ],
        batch_size=2000,
    )
    return sim


@pytest.fixture
def published(arena):
    return recompute(trigger="test")


def _controlled(snapshot) -> dict:
    return SnapshotSlice.objects.get(snapshot=snapshot, key="overall").controlled


def test_recompute_recovers_the_known_effects(arena, published):
    ctl = _controlled(published)
    assert ctl["battles"] == N and ctl["length_known"] == N and ctl["latency_known"] == N
    assert ctl["clustered"] and ctl["clusters"] == len(np.unique(arena.user))
    assert ctl["converged"] and not ctl["capped"]
    coef = {c["feature"]: c for c in ctl["coefficients"]}
    assert list(coef) == list(BASE)
    # The length effect (the one the board is mostly about) within its 95% interval; the
    # others within 3 standard errors.
    assert coef["length"]["lower"] < COEF["length"] < coef["length"]["upper"]
    for name in BASE:
        assert abs(coef[name]["log_odds"] - COEF[name]) < 3 * coef[name]["se"], name
        c = coef[name]
        assert c["points"] == pytest.approx(SCALE * c["log_odds"])
        assert (c["points_lower"], c["points_upper"]) == pytest.approx(
            (SCALE * c["lower"], SCALE * c["upper"])
        )
    # "twice as long as the other": x = (2 - 1) / (2 + 1) = 1/3
    assert coef["length"]["example_points"] == pytest.approx(SCALE * coef["length"]["log_odds"] / 3)


def test_controlled_board_matches_a_direct_fit_and_the_truth(arena, published):
    # Independent computation: the analysis fit on the simulator's own features and users.
    direct = fit_contextual(arena.counts(BASE), clustered=True)
    ctl = {c["feature"]: c for c in _controlled(published)["coefficients"]}
    for j, name in enumerate(BASE):
        assert abs(ctl[name]["log_odds"] - direct.coef[j]) < 0.1 * direct.coef_se[j], name
    rows = {
        r.model.key: r
        for r in SnapshotRow.objects.filter(
            slice__snapshot=published, slice__key="overall"
        ).select_related("model")
    }
    truth = dict(zip(arena.models, arena.truth, strict=True))
    controlled_err, plain_err = [], []
    for i, key in enumerate(direct.models):
        r = rows[key]
        assert r.controlled_rating == pytest.approx(direct.rating[i], abs=0.5)
        assert r.controlled_ci_lower < truth[key] < r.controlled_ci_upper
        controlled_err.append(abs(r.controlled_rating - truth[key]))
        plain_err.append(abs(r.rating - truth[key]))
    # Models with typically longer completions win more than their quality: the plain board
    # mixes that in (and is squeezed by the top slot); the controlled one does not.
    # (seed 3: controlled off by at most 16 points, inside every interval; plain by 99)
    assert 3 * max(controlled_err) < max(plain_err)
    # Controlled ranks are Rank (UB) over the controlled intervals.
    for key, r in rows.items():
        surely_better = sum(
            o.controlled_ci_lower > r.controlled_ci_upper for o in rows.values() if o is not r
        )
        assert r.controlled_rank == 1 + surely_better, key


@override_settings(ARENA_CONTROLLED_MAX_BATTLES=3000)
def test_the_battle_cap_reads_the_most_recent(arena):
    # The newest 1,000 battles lose their lengths: reading the newest 3,000 finds 2,000.
    newest = Battle.objects.order_by("-id").values("id")[:1000]
    Battle.objects.filter(id__in=newest).update(completion_a_chars=None)
    snapshot = recompute(trigger="test")
    ctl = _controlled(snapshot)
    assert ctl["battles"] == 3000 and ctl["capped"] and ctl["max_battles"] == 3000
    assert ctl["length_known"] == 2000 and ctl["latency_known"] == 3000
    # The plain board still counts every battle.
    assert board(snapshot_id=snapshot.pk)["category"]["battles"] == N
    with override_settings(ARENA_CONTROLLED_MAX_BATTLES=N):  # exactly all: not capped
        assert not _controlled(recompute(trigger="test"))["capped"]


def test_unknown_lengths_count_as_no_difference_and_too_few_leave_the_covariate_out(arena):
    Battle.objects.filter(id__in=Battle.objects.order_by("id").values("id")[: N - 100]).update(
        completion_b_chars=None
    )
    ctl = _controlled(recompute(trigger="test"))
    assert ctl["battles"] == N and ctl["length_known"] == 100
    assert [c["feature"] for c in ctl["coefficients"]] == ["top", "latency", "slow_top"]


@override_settings(ARENA_CONTROLLED_MAX_BATTLES=0)
def test_switched_off_the_page_says_so(arena, client):
    snapshot = recompute(trigger="test")
    assert _controlled(snapshot) is None
    page = client.get("/?view=controlled")
    assert page.status_code == 200
    html = page.content.decode()
    assert "without a controlled fit" in html and 'href="?view=controlled"' not in html


def test_page_toggle_shows_controlled_and_plain_ranks(published, client):
    plain = client.get("/")
    assert plain.status_code == 200
    assert 'href="?view=controlled"' in plain.content.decode()
    page = client.get("/?view=controlled")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Controlled rank" in html and "Plain rank" in html and "Controlled rating" in html
    assert 'name="view" value="controlled"' in html  # the filter form keeps the view
    data = board()
    first = min(
        (m for m in data["models"] if m["controlled_rank"] is not None),
        key=lambda m: (m["controlled_rank"], -m["controlled_rating"]),
    )
    assert f"{first['controlled_rating']:.1f}" in html
    # ETags differ with the view (the same snapshot, another body).
    assert plain["ETag"] and page["ETag"] and plain["ETag"] != page["ETag"]
    assert client.get("/?view=controlled", HTTP_IF_NONE_MATCH=page["ETag"]).status_code == 304


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("?view=stylish", "There is no view “stylish”"),
        ("?view=CONTROLLED", "There is no view “CONTROLLED”"),
        ("?category=kind:completion&view=controlled", "for the overall board only"),
    ],
)
def test_bad_view_values_show_the_plain_board_and_say_why(published, client, query, says):
    page = client.get("/" + query)
    assert page.status_code == 200
    html = page.content.decode()
    assert says in html and "Controlled rank" not in html


def test_an_empty_view_is_the_plain_board(published, client):
    html = client.get("/?view=").content.decode()
    assert "There is no view" not in html and "Controlled rank" not in html


def test_methodology_reports_each_effect_in_words(published, client):
    html = client.get("/methodology/").content.decode()
    coef = {c["feature"]: c for c in _controlled(published)["coefficients"]}
    length = coef["length"]
    assert "A completion twice as long as the other (in characters)" in html
    assert f"{length['example_points']:+.1f} points" in html
    assert f"{length['example_lower']:+.1f} to {length['example_upper']:+.1f}" in html
    assert html.count('data-feature="') == len(BASE)


def test_read_api_has_the_controlled_fields(published, client):
    body = client.get("/api/v1/leaderboard").json()
    assert [c["feature"] for c in body["category"]["controlled"]["coefficients"]] == list(BASE)
    rows = {r.model.key: r for r in SnapshotRow.objects.filter(slice__key="overall")}
    for m in body["models"]:
        r = rows[m["model"]]
        assert m["controlled_rating"] == r.controlled_rating
        assert m["controlled_rank"] == r.controlled_rank
        assert m["controlled_ci_lower"] < m["controlled_rating"] < m["controlled_ci_upper"]
    csv_text = client.get("/api/v1/leaderboard?format=csv").content.decode()
    header = csv_text.splitlines()[0].split(",")
    assert {"controlled_rating", "controlled_rank", "controlled_ci_lower"} <= set(header)
    # Slices have no controlled fit: the fields are there, empty.
    kind = client.get("/api/v1/leaderboard?category=kind:completion").json()
    assert kind["category"]["controlled"] is None
    assert all(m["controlled_rating"] is None for m in kind["models"])


def test_model_page_shows_its_controlled_rating(published, client):
    row = SnapshotRow.objects.filter(slice__key="overall", public=True).select_related("model")[0]
    html = client.get(f"/models/{row.model.key}/").content.decode()
    assert 'id="controlled-rating"' in html
    assert f"{row.controlled_rating:.1f} (95% interval {row.controlled_ci_lower:.1f}" in html


def test_demo_simulator_stores_lengths_without_an_effect(simulated):
    # ingest.simulation draws lengths per model that do not move the outcome.
    assert not Battle.objects.filter(completion_a_chars__isnull=True).exists()
    ctl = _controlled(recompute(trigger="test"))
    assert ctl["length_known"] == ctl["battles"] == 6000
    length = next(c for c in ctl["coefficients"] if c["feature"] == "length")
    assert length["lower"] < 0 < length["upper"]
    top = next(c for c in ctl["coefficients"] if c["feature"] == "top")
    assert top["lower"] > 1.0  # the simulator's 82% top slot: log(0.82 / 0.18) = 1.52


def test_a_failing_controlled_fit_still_publishes_the_plain_board(arena, monkeypatch, caplog):
    def broken(**kwargs):
        raise FloatingPointError("singular")

    monkeypatch.setattr("leaderboard.recompute.controlled_board", broken)
    snapshot = recompute(trigger="test")
    assert snapshot.status == "published" and _controlled(snapshot) is None
    assert "Controlled board failed" in caplog.text
    rows = SnapshotRow.objects.filter(slice__snapshot=snapshot, slice__key="overall")
    assert rows.filter(rating__isnull=False).count() == len(RATINGS)
    assert not rows.filter(controlled_rating__isnull=False).exists()


def test_a_recent_controlled_fit_is_reused_until_it_is_old_or_a_full_recompute(arena, settings):
    settings.ARENA_CONTROLLED_REFIT_SECONDS = 3600
    first = _controlled(recompute(trigger="test"))
    # Newer battles (the first 500 again, stored later): the plain board moves, the reused
    # controlled fit does not, and says when it was fitted.
    Battle.objects.bulk_create(
        [
            Battle(**{**row, "id": None, "pair_id": f"again-{i}", "content_hash": f"{i:064x}"})
            for i, row in enumerate(Battle.objects.order_by("id").values()[:500])
        ]
    )
    second = recompute(trigger="test")
    assert _controlled(second) == first
    full = _controlled(recompute(trigger="test", full=True))
    assert full["fitted_at"] > first["fitted_at"] and full["battles"] == first["battles"] + 500
    settings.ARENA_CONTROLLED_REFIT_SECONDS = 0
    assert _controlled(recompute(trigger="test"))["fitted_at"] > full["fitted_at"]


def _context_arena(top_ctx: float, n: int = 8000, seed: int = 9) -> float:
    """Battles of 4 models whose top-slot advantage is 0.3 + top_ctx * (centred log context)
    in log-odds, with context lengths stored and no lengths or latencies."""
    rng = np.random.default_rng(seed)
    theta = np.array([-0.4, 0.0, 0.2, 0.5])
    ids = [ArenaModelFactory(key=f"ctx-{i}").pk for i in range(4)]
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    c = rng.normal(0.0, 1.0, n)
    tokens = np.rint(np.exp(np.log(2000.0) + c)).astype(int)
    logs = np.log1p(tokens)
    centred = logs - np.median(logs)
    p = 1 / (1 + np.exp(-(theta[a] - theta[b] + 0.3 + top_ctx * centred)))
    won = rng.random(n) < p
    Battle.objects.bulk_create(
        [
            Battle(
                pair_id=f"cx-{i}",
                user_hash=f"{i % 400:064x}",
                model_a_id=ids[a[i]],
                model_b_id=ids[b[i]],
                outcome=0 if won[i] else 1,
                kind=BattleKind.COMPLETION,
                privacy=Privacy.PRIVATE,
                source=BattleSource.API,
                content_hash=f"{i:064x}",
                context_tokens=int(tokens[i]),
            )
            for i in range(n)
        ],
        batch_size=2000,
    )
    return top_ctx


def test_context_interaction_kept_when_it_predicts_better(fast_config, client):
    truth = _context_arena(0.9)
    ctl = _controlled(recompute(trigger="test"))
    context = ctl["context"]
    assert context["known"] == 8000 and context["kept"]
    assert context["score_with"] > context["score_without"]
    coef = {c["feature"]: c for c in ctl["coefficients"]}
    assert list(coef) == ["top", "top_ctx"]
    assert abs(coef["top_ctx"]["log_odds"] - truth) < 3 * coef["top_ctx"]["se"]
    assert abs(coef["top"]["log_odds"] - 0.3) < 3 * coef["top"]["se"]
    html = client.get("/methodology/").content.decode()
    assert 'id="controlled-context"' in html and "so they are in the fit" in html


def test_no_context_effect_changes_the_held_out_score_little(fast_config):
    _context_arena(0.0)
    context = _controlled(recompute(trigger="test"))["context"]
    assert context["known"] == 8000
    assert abs(context["score_with"] - context["score_without"]) < 0.002
