"""The engine's HTTP/1.1 client against httpx: the same requests, answers and errors.

Each call is made twice against the stub provider on loopback, once through an httpx client
(what the engine used) and once through `serving.http11.Http11Pool`, and what the stub saw
and what the caller got must match.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ssl
import subprocess

import httpx
import pytest

from serving.http11 import Http11Pool
from serving.providers import (
    Generation,
    Prompt,
    ProviderConfig,
    ProviderError,
    complete_with_usage,
)
from tests.serving.stub_provider import StubProvider

KINDS = ("openai_chat", "openai_completion", "mistral_fim")
FRAMINGS = (
    {},
    {"chunked": True},
    {"gzip": True},
    {"chunked": True, "gzip": True},
    {"close": True},
    {"close": True, "chunked": True},
)
PROMPT = Prompt(
    messages=({"role": "system", "content": "Fill in é ✓"}, {"role": "user", "content": "a = "}),
    prefix="def f():\n    return 'é ✓ \\u0000'\n" * 40,
    suffix="\nprint(f())\n" * 10,
    stop=("\n\n", "</CODE>", "a", "b", "c"),
)
KEY_ENV = "HTTP11_TEST_KEY"
SENTRY_TRACE = {"sentry-trace", "baggage"}


def run_async(coroutine):
    """``asyncio.run`` on a thread of its own: a browser test's Playwright (sync API) keeps an
    event loop marked running on the main thread for the rest of the session."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def config(stub, kind: str, model: str, *, base_url: str | None = None) -> ProviderConfig:
    return ProviderConfig(
        provider_id=1,
        kind=kind,
        base_url=base_url or stub.base_url,
        remote_model=model,
        api_key_env=KEY_ENV,
    )


def both(calls):
    """Run ``calls(client)`` with httpx, then with an Http11Pool: the two results."""

    async def run():
        tls = ssl.create_default_context()
        via_httpx = httpx.AsyncClient(timeout=None, verify=tls)
        pool = Http11Pool(tls, max_keepalive=16, use_httpx=False)
        try:
            return await calls(via_httpx), await calls(pool)
        finally:
            await via_httpx.aclose()
            await pool.aclose()

    return run_async(run())


async def outcome(client, cfg: ProviderConfig):
    try:
        return await complete_with_usage(client, cfg, PROMPT, Generation(max_tokens=64))
    except ProviderError as exc:
        return ("error", exc.reason, exc.detail)


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-http11-test")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("framing", FRAMINGS, ids=lambda f: "+".join(f) or "plain")
def test_same_request_and_answer_as_httpx(stub, kind, framing):
    stub.behave("m", middle="x = 1  # é", cost=0.25, **framing)

    async def calls(client):
        cfg = config(stub, kind, "m")
        return [await outcome(client, cfg) for _ in range(3)]  # reuse or reconnect

    stub.requests.clear()
    got_httpx, got_pool = both(calls)
    assert got_pool == got_httpx
    assert got_pool[0][0] and got_pool[0][1].cost == 0.25
    # httpx gains Sentry's trace headers once the SDK is initialised in the process (its
    # httpx integration; tests/ops initialise it): the engine's client does not send trace
    # ids and the release to providers, which are third parties.
    assert not any(SENTRY_TRACE & set(r.headers) for r in stub.requests[3:])
    sent = [
        (r.path, {k: v for k, v in r.headers.items() if k not in SENTRY_TRACE}, r.raw)
        for r in stub.requests
    ]
    assert len(sent) == 6
    assert sent[3:] == sent[:3]  # headers (names, values) and body bytes alike


def test_keep_alive_reuses_one_connection(stub):
    stub.behave("m")

    idle_after = []

    async def calls(client):
        cfg = config(stub, "mistral_fim", "m")
        got = [await outcome(client, cfg) for _ in range(20)]
        if isinstance(client, Http11Pool):
            idle_after.extend(len(idle) for idle in client._idle.values())
        return got

    got_httpx, got_pool = both(calls)
    assert got_pool == got_httpx
    assert idle_after == [1]  # one connection for the 20 calls, idle again


@pytest.mark.parametrize(
    "behaviour",
    [{"status": 500}, {"status": 429, "chunked": True}, {"malformed": True}, {"raw": "é"}],
    ids=["500", "429-chunked", "malformed", "raw"],
)
def test_same_errors_as_httpx(stub, behaviour):
    stub.behave("m", **behaviour)

    async def calls(client):
        return [await outcome(client, config(stub, kind, "m")) for kind in KINDS]

    got_httpx, got_pool = both(calls)
    assert got_pool == got_httpx


def test_same_errors_as_httpx_below_http(stub):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    urls = [
        f"http://127.0.0.1:{closed_port}/v1",  # refused
        "ftp://127.0.0.1/v1",  # another scheme: the httpx fallback
    ]

    async def calls(client):
        return [await outcome(client, config(stub, "mistral_fim", "m", base_url=u)) for u in urls]

    got_httpx, got_pool = both(calls)
    assert got_pool == got_httpx
    assert [o[:2] for o in got_pool] == [("error", "connect")] * 2


def test_missing_key_is_the_same_error(stub, monkeypatch):
    monkeypatch.delenv(KEY_ENV)

    async def calls(client):
        return await outcome(client, config(stub, "mistral_fim", "m"))

    got_httpx, got_pool = both(calls)
    assert got_pool == got_httpx and got_pool[:2] == ("error", "no_key")


def test_a_cancelled_call_does_not_return_its_connection(stub):
    stub.behave("slow", hang=True)
    stub.behave("m")

    async def run():
        pool = Http11Pool(ssl.create_default_context(), max_keepalive=16, use_httpx=False)
        try:
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2):
                    await outcome(pool, config(stub, "mistral_fim", "slow"))
            assert sum(len(idle) for idle in pool._idle.values()) == 0
            # The next call gets a fresh connection and its own answer.
            return await outcome(pool, config(stub, "mistral_fim", "m"))
        finally:
            await pool.aclose()

    text, _usage = run_async(run())
    assert text == "# m"


def test_proxies_in_the_environment_go_through_httpx(stub, monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    pool = Http11Pool(ssl.create_default_context(), max_keepalive=16)
    assert pool.target(stub.base_url + "/completions") is None
    monkeypatch.delenv("HTTPS_PROXY")
    pool = Http11Pool(ssl.create_default_context(), max_keepalive=16)
    assert pool.target(stub.base_url + "/completions") is not None


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for localhost (openssl): (cert path, key path)."""
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def _tls_calls(stub, client_tls: ssl.SSLContext):
    cfg = config(stub, "openai_chat", "tls-model", base_url=f"https://localhost:{stub.port}/v1")

    async def run():
        via_httpx = httpx.AsyncClient(timeout=None, verify=client_tls)
        pool = Http11Pool(client_tls, max_keepalive=16, use_httpx=False)
        try:
            first = await outcome(via_httpx, cfg)
            # twice through the pool: the second call reuses the kept-alive TLS connection
            return first, await outcome(pool, cfg), await outcome(pool, cfg)
        finally:
            await via_httpx.aclose()
            await pool.aclose()

    return run_async(run())


def test_https_answers_match_httpx_and_untrusted_certificates_fail_alike(certificate):
    """Real providers are https: the pool speaks TLS with the engine's context, verifies the
    certificate and the host name, and fails an untrusted one as httpx does."""
    cert, key = certificate
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    with StubProvider(tls=server_tls) as stub:
        trusted = ssl.create_default_context(cafile=str(cert))
        via_httpx, via_pool, again = _tls_calls(stub, trusted)
        assert via_httpx == via_pool == again and via_pool[0] != "error"
        assert len(stub.for_model("tls-model")) == 3
        stub.reset()
        untrusted = ssl.create_default_context()  # the system's CAs: not this certificate
        via_httpx, via_pool, _ = _tls_calls(stub, untrusted)
        assert via_httpx == via_pool == ("error", "connect", "ConnectError")
        assert not stub.for_model("tls-model")
