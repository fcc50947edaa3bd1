"""Fixtures for the evaluations: a stub provider, and catalogue models it serves.

Pure to import (the pure suites' tests run with ``-p no:django``); the Django fixtures
import models inside.
"""

from __future__ import annotations

import pytest

from tests.serving.stub_provider import StubProvider


@pytest.fixture(scope="module")
def stub_server():
    with StubProvider(record=False) as stub:
        yield stub


@pytest.fixture
def stub(stub_server):
    stub_server.reset()
    yield stub_server
    stub_server.reset()


def add_model(
    key: str, stub: StubProvider, *, kind: str = "openai_chat", remote: str = "", **extra
):
    """A catalogue model whose provider is the stub (remote name: ``remote`` or the key)."""
    from serving.models import ModelProvider
    from tests.factories import ArenaModelFactory

    model = ArenaModelFactory(key=key, visibility=extra.pop("visibility", "private"))
    ModelProvider.objects.create(
        model=model,
        kind=kind,
        base_url=stub.base_url,
        remote_model=remote or key,
        timeout_seconds=extra.pop("timeout_seconds", 5.0),
        **extra,
    )
    return model


@pytest.fixture
def eval_settings(settings):
    """Short leases and sandbox limits for tests (the defaults are for real runs)."""
    settings.EVALUATION_LEASE_SECONDS = 3.0
    settings.EVALUATION_CALL_TIMEOUT_SECONDS = 10.0
    settings.EVALUATION_SANDBOX_CPU_SECONDS = 3
    settings.EVALUATION_SANDBOX_WALL_SECONDS = 8.0
    return settings
