"""Fixtures for the reliability tests: a private Redis server that a test may kill or freeze."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import redis


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, *, timeout: float = 60.0, interval: float = 0.05, what: str = "it"):
    """Poll `predicate` until truthy; fail after a generous `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@dataclass
class PrivateRedis:
    port: int
    proc: subprocess.Popen

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def answers(self) -> bool:
        try:
            return bool(redis.Redis(port=self.port, socket_timeout=0.5).ping())
        except redis.exceptions.RedisError:
            return False

    def freeze(self) -> None:
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                tempfile.gettempdir(),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self.answers, what="the private Redis")


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis(port=free_port(), proc=None)  # type: ignore[arg-type]
    server.start()
    try:
        yield server
    finally:
        if server.proc.poll() is None:
            server.thaw()
            server.kill()


@pytest.fixture
def on_redis(settings, private_redis):
    """Point the site's cache, broker client and throttles at the private Redis."""
    from core.redis_client import breaker

    settings.REDIS_URL = private_redis.url
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "LOCATION": private_redis.url},
    }
    # Long enough that no probe falls inside a test: each test sees exactly the failures
    # its requests caused (a test that wants a probe sets it to 0).
    breaker.reset_timeout = 3600
    breaker.close()
    yield private_redis
    breaker.reset_timeout = None  # REDIS_BREAKER_SECONDS again
    breaker.close()
