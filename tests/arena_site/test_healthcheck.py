"""arena-healthcheck: the Host it sends, and that it only asks http(s) URLs."""

from __future__ import annotations

import pytest

from arena_site.healthcheck import host_header, main


@pytest.mark.parametrize(
    ("allowed", "host"),
    [
        ("", None),
        ("*", None),
        ("*, arena.example.org", "arena.example.org"),
        (".example.org", "example.org"),
    ],
)
def test_host_header_is_the_first_named_allowed_host(allowed, host):
    assert host_header(allowed) == host


def test_a_url_that_is_not_http_is_refused(monkeypatch, tmp_path, capsys):
    page = tmp_path / "healthz"
    page.write_text("ok")
    monkeypatch.setenv("HEALTHCHECK_URL", page.as_uri())
    assert main() == 1
    assert "not an http(s) URL" in capsys.readouterr().err
