"""Models over their lifetime: retired models keep a page and their history, and are listed
apart on the board only when asked (?deprecated=1); hidden ones stay 404; release facts shown."""

from __future__ import annotations

import datetime as dt
import re

from django.utils import timezone

from catalogue.models import ArenaModel, Visibility
from leaderboard.recompute import recompute


def _retire(key: str) -> ArenaModel:
    m = ArenaModel.objects.get(key=key)
    m.visibility = Visibility.RETIRED
    m.clean()
    m.save()
    return m


def test_saving_as_retired_dates_it_and_unretiring_clears_it(db):
    m = ArenaModel.objects.create(key="old-model", display_name="Old")
    assert m.retired_at is None
    m.visibility = Visibility.RETIRED
    m.clean()
    assert m.retired_at is not None and m.is_retired
    m.visibility = Visibility.PUBLIC
    m.clean()
    assert m.retired_at is None and not m.is_retired


def test_retired_model_page_has_banner_and_history(client, simulated):
    recompute(trigger="test")
    m = _retire("codestral-2405")
    m.retired_at = timezone.make_aware(dt.datetime(2026, 3, 4, 12, 0))
    m.save()
    recompute(trigger="test")
    r = client.get("/models/codestral-2405/")
    html = r.content.decode()
    assert r.status_code == 200
    assert 'id="retired-banner"' in html and "Retired on 2026-03-04" in html
    assert 'id="chart-history"' in html  # the rating while it was on the board
    # Off the board itself, unless asked for.
    board = client.get("/").content.decode()
    assert 'href="/models/codestral-2405/"' not in board
    assert "deprecated=1" in board and 'id="retired-table"' not in board


def test_deprecated_toggle_lists_retired_only(client, simulated):
    recompute(trigger="test")
    _retire("codestral-2405")
    ArenaModel.objects.filter(key="deepseek-coder-fim").update(visibility=Visibility.HIDDEN)
    recompute(trigger="test")
    html = client.get("/", {"deprecated": "1"}).content.decode()
    section = html[html.index('<section id="retired">') :]
    section = section[: section.index("</section>")]
    assert 'href="/models/codestral-2405/"' in section and "Hide the 1 retired model" in html
    assert "deepseek-coder-fim" not in section  # hidden stays hidden
    # Its last rating while public is shown: a number, with its interval.
    assert re.search(r'<td data-v="[0-9.]+">[0-9]+\.[0-9]</td>', section)
    assert client.get("/models/deepseek-coder-fim/").status_code == 404


def test_private_and_hidden_models_have_no_page(client, simulated):
    ArenaModel.objects.filter(key="codestral-2405").update(visibility=Visibility.PRIVATE)
    ArenaModel.objects.filter(key="deepseek-coder-fim").update(visibility=Visibility.HIDDEN)
    assert client.get("/models/codestral-2405/").status_code == 404
    assert client.get("/models/deepseek-coder-fim/").status_code == 404


def test_release_date_and_knowledge_cutoff_on_the_model_page(client, simulated):
    recompute(trigger="test")
    ArenaModel.objects.filter(key="codestral-2405").update(
        release_date=dt.date(2024, 5, 29), knowledge_cutoff="2024-01"
    )
    html = client.get("/models/codestral-2405/").content.decode()
    assert "released 2024-05-29" in html and "knowledge cutoff 2024-01" in html
    html = client.get("/models/deepseek-coder-fim/").content.decode()
    assert "released" not in html and "knowledge cutoff" not in html
