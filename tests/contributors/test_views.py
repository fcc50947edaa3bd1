"""The take-part page: linked from every page, shows this server's own address as it was reached."""

from __future__ import annotations

import pytest


@pytest.mark.django_db
def test_take_part_page_shows_the_servers_own_address(client):
    r = client.get("/take-part/")
    html = r.content.decode()
    assert r.status_code == 200
    assert '"arena.serverUrl": "http://testserver"' in html
    assert "copilot-arena.copilot-arena" in html
    assert "Research" in html and "Private" in html and "Debug" in html
    assert 'href="/contributors/"' in html


@pytest.mark.django_db
def test_take_part_page_follows_the_host_and_the_trusted_proxy_scheme(client, settings):
    settings.ALLOWED_HOSTS = ["arena.example.org"]
    settings.TRUSTED_PROXIES = ["127.0.0.1/32"]  # the test client's address: our proxy
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    r = client.get("/take-part/", HTTP_HOST="arena.example.org", HTTP_X_FORWARDED_PROTO="https")
    assert r.status_code == 200
    assert '"arena.serverUrl": "https://arena.example.org"' in r.content.decode()
    # Without a trusted proxy header, or from a peer that is not a trusted proxy, the
    # forwarded scheme is not believed.
    settings.TRUSTED_PROXIES = []
    r = client.get("/take-part/", HTTP_HOST="arena.example.org", HTTP_X_FORWARDED_PROTO="https")
    assert '"arena.serverUrl": "http://arena.example.org"' in r.content.decode()
    settings.TRUSTED_PROXIES = ["127.0.0.1/32"]
    settings.SECURE_PROXY_SSL_HEADER = None
    r = client.get("/take-part/", HTTP_HOST="arena.example.org", HTTP_X_FORWARDED_PROTO="https")
    assert '"arena.serverUrl": "http://arena.example.org"' in r.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/methodology/", "/slices/", "/contributors/"])
def test_every_page_links_to_take_part(client, path):
    r = client.get(path)
    assert r.status_code == 200
    assert '<a href="/take-part/">Take part</a>' in r.content.decode()
