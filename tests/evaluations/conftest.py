"""A stub provider for the evaluation suites (pure to import; the tests using it need Django)."""

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
