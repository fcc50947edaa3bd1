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


def test_beat_is_healthy_while_a_beat_of_the_site_holds_the_lock(monkeypatch, settings, capsys):
    if not settings.REDIS_URL:
        pytest.skip("beat's lock lives in Redis")
    import uuid

    import redis

    prefix = f"test-hc-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("REDIS_URL", settings.REDIS_URL)
    monkeypatch.setenv("CACHE_KEY_PREFIX", prefix)
    monkeypatch.setattr("sys.argv", ["arena-healthcheck", "--beat"])
    assert main() == 1
    assert "no beat holds" in capsys.readouterr().err
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.set(f"{prefix}:beat::lock", "token", ex=30)
    try:
        assert main() == 0
    finally:
        client.delete(f"{prefix}:beat::lock")
