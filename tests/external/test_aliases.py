"""The alias table: seeded from SOURCES.md, checked against the real files, editable in the
admin (an edit re-matches imported scores), and the order of precedence of matches."""

from __future__ import annotations

from collections import defaultdict

import pytest

from catalogue.demo import DEMO_MODELS
from catalogue.models import ArenaModel, ModelAlias
from external import benchmark_formats as bf
from external.models import ExternalAlias, ExternalScore, ExternalSource, Match
from external.seed_aliases import SEED_ALIASES
from external.services import import_scores, resolve_scores, seed_external_aliases

from .conftest import BENCH, run


def _names_in_files() -> dict[str, set[str]]:
    rows = [
        *bf.parse_livebench(
            BENCH / "livebench/table_2024_08_31.csv", BENCH / "livebench/categories_2024_08_31.json"
        ),
        *bf.parse_bigcodebench(BENCH / "bigcodebench/results.json"),
        *bf.parse_bigcodebench(BENCH / "bigcodebench/results-hard.json"),
        *bf.parse_livecodebench(BENCH / "livecodebench/performances_generation.json"),
        *bf.parse_chatbot_arena(BENCH / "chatbot-arena/lmsys_2024_12_31.csv"),
        *bf.parse_evalplus(BENCH / "evalplus/results.json"),
    ]
    names: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        names[row.source].add(row.model_name)
    return names


def test_every_seeded_spelling_exists_in_its_source_file():
    # A typo in the alias table would silently drop a model from a correlation.
    names = _names_in_files()
    missing = [(s, n) for s, n, *_ in SEED_ALIASES if n not in names[s]]
    assert missing == []


def test_every_seeded_target_is_a_demo_model_and_each_source_maps_a_model_once():
    keys = {m.key for m in DEMO_MODELS}
    assert {k for _, _, k, _, _ in SEED_ALIASES if k} <= keys
    seen = set()
    for source, _, key, _, _ in SEED_ALIASES:
        if key:
            assert (source, key) not in seen, (source, key)
            seen.add((source, key))


def test_sources_md_caveats_are_followed(aliases):
    def alias(source: str, name: str) -> ExternalAlias:
        return ExternalAlias.objects.get(source__key=source, name=name)

    deepseek = alias("chatbot_arena", "Deepseek-v2.5")
    assert deepseek.model.key == "deepseek-coder-fim" and deepseek.caveat
    assert "2024-12-10" in deepseek.note
    assert alias("chatbot_arena", "Deepseek-v2.5-1210").model is None
    assert alias("livecodebench", "Codestral-Latest").model is None
    assert alias("livecodebench", "DeepSeek-V3").model is None
    assert alias("evalplus", "Codestral-22B-v0.1").model.key == "codestral-2405"
    assert alias("chatbot_arena", "Meta-Llama-3.1-405B-Instruct-fp8").model is None
    assert alias("chatbot_arena", "ChatGPT-4o-latest (2024-11-20)").model is None


def test_seeding_is_idempotent_and_never_overwrites_an_edit(aliases):
    assert aliases == len(SEED_ALIASES)
    edited = ExternalAlias.objects.get(source__key="livecodebench", name="Codestral-Latest")
    edited.model = ArenaModel.objects.get(key="codestral-2405")
    edited.save()
    assert seed_external_aliases() == 0
    edited.refresh_from_db()
    assert edited.model.key == "codestral-2405"


def test_seeding_skips_models_missing_from_the_catalogue(db):
    ArenaModel.objects.create(key="gpt-4o-2024-08-06", display_name="GPT-4o")
    created = seed_external_aliases()
    targets = set(
        ExternalAlias.objects.filter(model__isnull=False).values_list("model__key", flat=True)
    )
    assert targets == {"gpt-4o-2024-08-06"}
    unmatched_by_design = sum(1 for *_, key, _, _ in SEED_ALIASES if key is None)
    assert created == 5 + unmatched_by_design  # its five spellings, plus the "no model" rows


def test_match_precedence_alias_then_catalogue_key(tmp_path, catalogue):
    ModelAlias.objects.create(
        key="old-codestral", model=ArenaModel.objects.get(key="codestral-2405")
    )
    path = tmp_path / "rates.csv"
    path.write_text(
        "model,win_rate\ngpt-4o-2024-08-06,0.5\nold-codestral,0.4\nGPT 4o,0.6\nmystery,0.1\n"
    )
    import_scores(fmt="codearena", paths=[path])

    def match(name: str) -> tuple[str | None, str]:
        s = ExternalScore.objects.get(name=name)
        return (s.model.key if s.model else None, s.match)

    assert match("gpt-4o-2024-08-06") == ("gpt-4o-2024-08-06", Match.KEY)
    assert match("old-codestral") == ("codestral-2405", Match.KEY)  # the catalogue's own alias
    assert match("GPT 4o") == (None, Match.NONE)
    source = ExternalSource.objects.get(key="codearena")
    # An alias wins over a key match; an alias without a model un-matches a key match.
    ExternalAlias.objects.create(
        source=source, name="GPT 4o", model=ArenaModel.objects.get(key="gpt-4o-2024-08-06")
    )
    ExternalAlias.objects.create(source=source, name="gpt-4o-2024-08-06", model=None)
    assert resolve_scores() == 2
    assert match("GPT 4o") == ("gpt-4o-2024-08-06", Match.ALIAS)
    assert match("gpt-4o-2024-08-06") == (None, Match.IGNORED)
    assert match("mystery") == (None, Match.NONE)


def test_two_names_for_one_model_are_reported(tmp_path, catalogue):
    path = tmp_path / "rates.csv"
    path.write_text("model,win_rate\ncodestral-2405,0.4\nCodestral 24.05,0.45\n")
    ExternalAlias.objects.create(
        source=ExternalSource.objects.create(key="codearena", name="CodeArena", kind="judge"),
        name="Codestral 24.05",
        model=ArenaModel.objects.get(key="codestral-2405"),
    )
    out = run("import_external_scores", "codearena", str(path))
    assert "warning: codestral-2405 matches several names (Codestral 24.05, codestral-2405)" in out


@pytest.fixture
def staff_client(client, django_user_model):
    user = django_user_model.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(user)
    return client


def test_editing_an_alias_in_the_admin_rematches_imported_scores(
    staff_client, aliases, django_capture_on_commit_callbacks, monkeypatch
):
    from external import tasks

    queued = []
    monkeypatch.setattr(tasks.compute_correlations_task, "delay", lambda **kw: queued.append(kw))
    lcb = BENCH / "livecodebench/performances_generation.json"
    run("import_external_scores", "livecodebench", str(lcb))
    row = ExternalScore.objects.get(name="Codestral-Latest")
    assert row.model is None
    alias = ExternalAlias.objects.get(source__key="livecodebench", name="Codestral-Latest")
    codestral = ArenaModel.objects.get(key="codestral-2405")
    with django_capture_on_commit_callbacks(execute=True):
        r = staff_client.post(
            f"/admin/external/externalalias/{alias.pk}/change/",
            {
                "source": alias.source_id,
                "name": alias.name,
                "model": codestral.pk,
                "note": "Checked: the evaluation ran before codestral-2501.",
                "caveat": "on",
            },
        )
    assert r.status_code == 302, r.content.decode()[:2000]
    row.refresh_from_db()
    assert row.model == codestral and row.match == Match.ALIAS
    assert queued == [{"snapshot_id": None}]
    # Deleting it puts the name back to unmatched.
    with django_capture_on_commit_callbacks(execute=True):
        r = staff_client.post(f"/admin/external/externalalias/{alias.pk}/delete/", {"post": "yes"})
    assert r.status_code == 302
    row.refresh_from_db()
    assert row.model is None and row.match == Match.NONE


def test_admin_pages_list_sources_boards_scores_and_aliases(staff_client, aliases):
    run("import_external_scores", "evalplus", str(BENCH / "evalplus/results.json"))
    for url in (
        "/admin/external/externalsource/",
        "/admin/external/externalalias/?source__id__exact=1",
        "/admin/external/externalboard/",
        "/admin/external/externalscore/?match__exact=",
        "/admin/external/correlationresult/",
    ):
        assert staff_client.get(url).status_code == 200, url
    source = ExternalSource.objects.get(key="evalplus")
    page = staff_client.get(f"/admin/external/externalsource/{source.pk}/change/")
    assert page.status_code == 200 and b"Codestral-22B-v0.1" in page.content


def test_a_merged_key_counts_as_its_target(tmp_path, catalogue):
    target = ArenaModel.objects.get(key="codestral-2405")
    ArenaModel.objects.create(key="codestral-dup", display_name="dup", merged_into=target)
    path = tmp_path / "rates.csv"
    path.write_text("model,win_rate\ncodestral-dup,0.4\n")
    import_scores(fmt="codearena", paths=[path])
    assert ExternalScore.objects.get(name="codestral-dup").model == target
