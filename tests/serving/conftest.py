"""Fixtures for pair serving: a stub provider on loopback and catalogue models served by it.

Django-dependent modules are imported inside the fixtures, like the root conftest does.
"""

from __future__ import annotations

import pytest

from tests.serving.stub_provider import StubProvider

SECRET = "sk-test-SECRET-5f1d2c3b4a69788796a5b4c3d2e1f0"
SECRET_ENV = "STUB_PROVIDER_KEY"

# Catalogue key -> (provider kind, remote model name) for the standard served set.
SERVED = {
    "gpt-4o-2024-08-06": ("openai_chat", "stub-gpt"),
    "codestral-2405": ("mistral_fim", "stub-codestral"),
    "deepseek-coder-fim": ("openai_completion", "stub-deepseek"),
}


@pytest.fixture(scope="session")
def stub_server():
    with StubProvider() as stub:
        yield stub


@pytest.fixture
def stub(stub_server):
    stub_server.reset()
    yield stub_server
    stub_server.reset()


@pytest.fixture(autouse=True)
def _serving_isolation():
    from serving.selectors import clear_serving_state

    clear_serving_state()
    yield
    clear_serving_state()


@pytest.fixture
def secret_env(monkeypatch):
    monkeypatch.setenv(SECRET_ENV, SECRET)
    return SECRET


def add_provider(key: str, kind: str, remote: str, stub: StubProvider, **extra):
    from serving.models import ModelProvider
    from tests.factories import ArenaModelFactory

    model = ArenaModelFactory(key=key)
    return ModelProvider.objects.create(
        model=model,
        kind=kind,
        base_url=stub.base_url,
        remote_model=remote,
        api_key_env=extra.pop("api_key_env", SECRET_ENV),
        timeout_seconds=extra.pop("timeout_seconds", 5.0),
        **extra,
    )


@pytest.fixture
def served(db, stub, secret_env):
    """Three models of the three provider kinds, all served by the stub, with a key."""
    return {key: add_provider(key, kind, remote, stub) for key, (kind, remote) in SERVED.items()}
