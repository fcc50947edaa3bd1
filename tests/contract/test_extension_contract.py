"""The real Copilot Arena extension (v1.2.7, vendored under extension/) against this server.

The extension's own TypeScript, bundled by its own esbuild.js, runs in Node with a stand-in
`vscode` module and is driven through its entry points (driver.js): activate(), its inline
completion provider, Tab / Shift-Tab, inline edits accepted left / right or rejected, a single
completion, the Personal Statistics panel and its Register form. These tests then read what the
server stored, including the personal statistics panel, registration and a trailing-slash URL.
"""

from __future__ import annotations

import pytest

from tests.contract import arena
from tests.contract.conftest import VOTES

# Read-only tests (rolled back); the runs commit through the live server.
pytestmark = pytest.mark.django_db

PRIVACIES = ["Research", "Private", "Debug"]


@pytest.fixture(params=PRIVACIES)
def run(request, runner):
    return runner.get(request.param)


def user_hash(run) -> str:
    from ingest.pseudonyms import pseudonymise_user

    return pseudonymise_user(run.machine_id)


def test_extension_activates_and_every_route_answers(run):
    report = run.report
    assert report["errors"] == [] and report["unhandled"] == []
    assert report["extensionVersion"] == "1.2.7"
    assert report["activation"]["termsPrompted"] and report["activations"] == 3
    for command in ("arena.selectFirstInlineCompletion", "arena.selectSecondInlineCompletion"):
        assert command in report["activation"]["commands"]
    routes = {"/" + c["path"].lstrip("/") for c in report["calls"]}
    assert routes >= {
        "/create_pair",
        "/add_completion",
        "/add_completion_outcome",
        "/add_single_outcome",
        "/create_edit_pair",
        "/add_edit_outcome",
        "/user_vote_count",
        "/user_scores",
        "/users",
        "/users/authenticate",
    }
    # Before it registers, the panel's start-up authenticate is rightly a 401.
    failed = [
        (c["method"], c["path"], c["status"])
        for c in report["calls"]
        if c["status"] != 200
        and not (c["path"].endswith("users/authenticate") and c["status"] == 401)
    ]
    assert failed == []
    # arena.modelTags is read and sent: the untagged model is never offered.
    assert all(c["request"]["modelTags"] == [arena.TAG] for c in run.calls("/create_pair"))
    offered = {item["model"] for pair in run.pairs for item in pair["completionItems"]}
    assert offered <= set(arena.SERVED) and arena.DECOY[0] not in offered


def test_tab_and_shift_tab_store_the_shown_pair_with_positions_and_winner(run):
    from ingest.models import Battle, BattleKind, Outcome

    votes = run.report["votes"]
    assert len(votes) == VOTES and {v["key"] for v in votes} == {"Tab", "Shift-Tab"}
    stored = {b.pair_id: b for b in Battle.objects.filter(user_hash=user_hash(run))}
    for vote in votes:
        top, bottom = vote["top"], vote["bottom"]
        # What the user saw: the top completion, the separator, the bottom one.
        shown = vote["shown"][0]
        assert (
            shown.index(top["completion"])
            < shown.index("======")
            < shown.index(bottom["completion"])
        )
        chosen = top if vote["key"] == "Tab" else bottom
        assert vote["inserted"] == chosen["completion"]
        battle = stored[vote["pairId"]]
        assert (battle.model_a.key, battle.model_b.key) == (top["model"], bottom["model"])
        assert battle.outcome == (Outcome.A if vote["key"] == "Tab" else Outcome.B)
        assert battle.kind == BattleKind.COMPLETION
        assert (battle.privacy, battle.file_type, battle.language) == (
            run.privacy,
            "python",
            "python",
        )
        assert battle.client_version == "1.2.7"
        # Serving is on: each vote is bound to the pair this server served, so it counts.
        assert (battle.hold, battle.excluded) == ("", False)
    assert not Battle.objects.filter(model_a__key=arena.DECOY[0]).exists()


def test_a_single_completion_offered_from_the_extension_cache(run):
    from ingest.models import SingleOutcome

    single = run.report["single"]
    assert single["fromCache"] and single["status"] == 200
    assert single["shown"] == [single["inserted"]] and single["inserted"]
    row = SingleOutcome.objects.get(completion_id=single["completionId"])
    assert row.model.key == single["model"] and row.user_hash == user_hash(run)
    assert row.client_version == "1.2.7"


def test_inline_edits_accepted_left_right_and_rejected(run):
    from ingest.models import Battle, BattleKind, Outcome

    edits = {e["action"]: e for e in run.report["edits"]}
    assert set(edits) == {"left", "right", "reject"}
    expected = {"left": (0, Outcome.A), "right": (1, Outcome.B), "reject": (-2, Outcome.BOTH_BAD)}
    for action, edit in edits.items():
        assert edit["diffEditors"] == ["llm_response1.txt", "llm_response2.txt"]
        assert edit["activeFile"] == "app.py"
        assert set(arena.CHAT) == {edit["left"]["model"], edit["right"]["model"]}
        battle = Battle.objects.get(pair_id=edit["pairId"])
        assert battle.user_hash == user_hash(run) and battle.kind == BattleKind.EDIT
        assert (battle.hold, battle.excluded) == ("", False)  # bound to the served edit pair
        assert (battle.model_a.key, battle.model_b.key) == (
            edit["left"]["model"],
            edit["right"]["model"],
        )
        assert (edit["acceptedIndex"], battle.outcome) == expected[action]
        # The selected lines are replaced by the chosen response, or kept when both are rejected.
        lines = edit["documentBefore"].split("\n")
        first, last = edit["selected"]
        chosen = {"left": edit["left"], "right": edit["right"]}.get(action)
        if chosen is not None:
            lines[first : last + 1] = chosen["response"].split("\n")
        assert edit["documentAfter"] == "\n".join(lines)
        assert edit["changed"] == (action != "reject")


def test_every_served_completion_has_one_log_row(run):
    from ingest.models import CompletionLog

    served = {item["completionId"]: item for pair in run.pairs for item in pair["completionItems"]}
    shown = {c["request"]["completionId"] for c in run.calls("/add_completion")}
    assert shown and shown <= set(served)
    logs = {
        log.completion_id: log for log in CompletionLog.objects.filter(completion_id__in=served)
    }
    assert set(logs) == set(served)
    for completion_id, log in logs.items():
        item = served[completion_id]
        assert log.model.key == item["model"] and log.pair_index == item["pairIndex"]
        assert (log.user_hash, log.privacy) == (user_hash(run), run.privacy)


def test_shown_completions_merge_into_the_servers_log_row(run):
    from ingest.models import CompletionLog

    served = {item["completionId"]: item for pair in run.pairs for item in pair["completionItems"]}
    shown = {c["request"]["completionId"] for c in run.calls("/add_completion")}
    for log in CompletionLog.objects.filter(completion_id__in=shown):
        assert log.served_by_us, log.completion_id
        # The pair's answer gives the latency in seconds, rounded to the millisecond.
        assert log.latency_ms == pytest.approx(
            served[log.completion_id]["latency"] * 1000.0, abs=1.0
        )
        assert (log.file_type, log.client_version) == ("python", "1.2.7")


def test_code_is_kept_only_under_research(run, database_dump):
    from ingest.models import Battle, CodeContext, CompletionCode

    battles = Battle.objects.filter(user_hash=user_hash(run))
    completion_ids = {
        item["completionId"] for pair in run.pairs for item in pair["completionItems"]
    }
    dump = database_dump()
    if run.privacy == "Research":
        code = CodeContext.objects.filter(battle__in=battles)
        assert code.count() == battles.count()
        assert all(f"CONTRACT_PREFIX_{run.marker}" in c.prefix for c in code)
        assert all(c.repo_url == run.repo_url for c in code)
        assert CompletionCode.objects.filter(completion_id__in=completion_ids).exists()
        for secret in run.secrets:  # the scan finds what is there
            assert secret in dump, secret
    else:
        assert not CodeContext.objects.filter(battle__in=battles).exists()
        assert not CompletionCode.objects.filter(completion_id__in=completion_ids).exists()
        assert all("repoUrl" not in c["request"] for c in run.calls("/add_completion_outcome"))
        for secret in run.secrets:
            assert secret not in dump, secret
            assert secret.encode() not in run.redis, secret
            assert secret not in run.server_log, secret


def test_the_register_form_sends_username_and_metadata_without_password(run):
    (call,) = run.calls("/users", "PUT")
    assert set(call["request"]) == {"userId", "username", "metadata"}
    assert call["request"]["userId"] == run.machine_id
    assert call["request"]["metadata"]["yearsOfExperience"] == 7


def test_personal_statistics_panel_shows_vote_count_and_scores(run):
    votes = run.report["votes"]
    per_model: dict[str, int] = {}
    for vote in votes:
        for side in ("top", "bottom"):
            per_model[vote[side]["model"]] = per_model.get(vote[side]["model"], 0) + 1
    assert all(c["status"] == 200 for c in run.calls("/user_scores"))
    panel = run.report["panel"]["final"]["display"]
    assert panel["voteCount"] == VOTES and not panel["noDataMessage"] and not panel["locked"]
    table = {row["model"]: row for row in panel["table"]}
    assert set(table) >= set(per_model)
    for model, row in table.items():
        assert row["votes"] == per_model.get(model, 0)
    assert [r["rank"] for r in panel["table"]] == list(range(1, len(table) + 1))
    # One score list per 20 of the user's votes: the chart's ranks over that sequence.
    assert panel["chartPoints"] == VOTES // 20
    assert {r["model"]: r["rank"] for r in panel["chart"][-1]} == {
        r["model"]: r["rank"] for r in panel["table"]
    }


def test_vote_count_counts_completion_votes(run):
    last = run.calls("/user_vote_count")[-1]
    assert last["status"] == 200 and last["response"]["voteCount"] == VOTES


def test_register_then_the_panel_greets_the_user_after_a_restart(run):
    panel = run.report["panel"]
    registered = run.report["config"]["username"]
    assert run.calls("/users", "PUT")[0]["status"] in (200, 201, 204)
    assert [m["text"] for m in panel["registration"]["messages"]] == ["Registration successful!"]
    assert panel["afterRegister"]["display"]["header"] == f"Welcome, {registered}!"
    # On start the panel authenticates with the machine id and an empty username.
    login = run.calls("/users/authenticate")[-1]
    assert login["request"] == {"userId": run.machine_id, "username": ""}
    assert login["status"] == 200 and login["response"]["user"]["username"] == registered
    assert panel["afterRestart"]["display"]["header"] == f"Welcome, {registered}!"


def test_a_server_url_with_a_trailing_slash(runner):
    from ingest.models import Battle

    run = runner.get("Private", trailing_slash=True)
    calls = run.report["calls"]
    assert calls and all(c["path"].startswith("//") for c in calls)
    registered = next(i for i, c in enumerate(calls) if c["path"] == "//users")
    # Before registering, the panel's login finds no user: 401 is the answer it expects.
    expected_401 = {
        i for i, c in enumerate(calls[:registered]) if c["path"] == "//users/authenticate"
    }
    refused = [
        (c["path"], c["status"])
        for i, c in enumerate(calls)
        if not 200 <= c["status"] < 300 and not (i in expected_401 and c["status"] == 401)
    ]
    assert refused == []
    assert Battle.objects.filter(user_hash=user_hash(run)).count() == 3
