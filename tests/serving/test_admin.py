"""Admin pages of pair serving render, with and without providers and fits."""

from __future__ import annotations

import pytest

from serving.models import SamplingConfig


@pytest.mark.django_db
def test_pages_render_without_any_provider(admin_client):
    assert admin_client.get("/admin/serving/modelprovider/").status_code == 200
    assert admin_client.get("/admin/serving/modelprovider/add/").status_code == 200
    assert admin_client.get("/admin/serving/pairdistribution/").status_code == 200
    page = admin_client.get(f"/admin/serving/samplingconfig/{SamplingConfig.current().pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "No latency fit yet" in html and "Fewer than two models" in html


def test_adding_a_provider_through_the_admin(admin_client, served, stub):
    from tests.factories import ArenaModelFactory

    model = ArenaModelFactory(key="local-ollama-model")
    response = admin_client.post(
        "/admin/serving/modelprovider/add/",
        {
            "model": model.pk,
            "kind": "openai_completion",
            "base_url": "http://127.0.0.1:11434/v1",
            "remote_model": "qwen2.5-coder:1.5b-base",
            "api_key_env": "",
            "timeout_seconds": "8",
            "max_concurrency": "16",
            "tags": "local, fim",
            "enabled": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    provider = model.provider
    assert provider.tag_set == {"local", "fim"} and provider.key_present
    listing = admin_client.get("/admin/serving/modelprovider/").content.decode()
    assert "local-ollama-model" in listing and "none needed" in listing
    page = admin_client.get(f"/admin/serving/samplingconfig/{SamplingConfig.current().pk}/change/")
    assert page.content.decode().count("local-ollama-model") >= 3  # model row and its pairs
