"""A minimal HTTP/1.1 client on asyncio streams for the engine's provider calls.

httpx was about half of a served pair's CPU (building the request, its URL and header
models, httpcore's pool and h11's state machine, anyio's cancellation scopes): ~0.59 ms of
CPU per call against the stub provider, where writing the request and reading the answer on
an asyncio stream costs ~0.06 ms. The engine's calls are all one shape -- a JSON POST to a
provider's base URL, answered by one JSON body -- so this client does only that:

* one pool of keep-alive connections per `Http11Pool` (the engine keeps a few per provider,
  see `engine._Shards`): no limit on connections, at most ``max_keepalive`` idle ones, an
  idle connection dropped after ``keepalive_expiry`` seconds or as soon as the server closed
  it (httpx's defaults: 5 s);
* TLS for https with the engine's SSL context (ALPN ``http/1.1``, as httpcore sets it);
* answers with ``Content-Length``, ``Transfer-Encoding: chunked`` or read to the close, in
  ``gzip``, ``deflate``, ``br`` (when brotli is installed) or identity, as httpx decodes them;
* no timeouts of its own (the engine bounds each call with ``asyncio.timeout``, as it did
  with httpx's ``timeout=None``); a cancelled or failed call closes its connection;
* errors are `HTTPCallError` named after the httpx exception the same failure raised
  (``ConnectError``, ``WriteError``, ``ReadError``, ``RemoteProtocolError``,
  ``DecodingError``), so `providers` reports the same details.

It sends what httpx sent: Host, Accept, Accept-Encoding, Connection, User-Agent, the
caller's headers, Content-Length, Content-Type. URLs it does not handle (other schemes,
user info) and processes with proxy settings in the environment (httpx honours
``HTTP(S)_PROXY``/``ALL_PROXY``) go through an httpx client instead
(`Http11Pool.fallback`), configured as the engine's were.
"""

from __future__ import annotations

import asyncio
import ssl
import time
import urllib.request
import zlib
from collections import deque
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

try:  # httpx decodes br when brotli is installed; so does this client
    import brotli
except ImportError:  # pragma: no cover - brotli is installed with the project
    brotli = None

_ACCEPT_ENCODING = b"gzip, deflate, br" if brotli is not None else b"gzip, deflate"
_USER_AGENT = f"python-httpx/{httpx.__version__}".encode("ascii")
_CRLF = b"\r\n"
_MAX_HEADERS = 100


class HTTPCallError(Exception):
    """A call that failed below HTTP; ``name`` is the matching httpx exception's class name."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


@dataclass(frozen=True)
class Target:
    """Where one URL's requests go, and the fixed start of their head."""

    host: str
    port: int
    tls: bool
    head: bytes  # request line + headers up to (not including) the caller's headers


def _target(url: str) -> Target | None:
    """The URL as a `Target`, or None for what only httpx handles."""
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not host or parts.username is not None:
        return None
    if parts.password is not None or not url.isascii() or any(c in url for c in " \r\n\t"):
        return None
    tls = parts.scheme == "https"
    default = 443 if tls else 80
    port = port or default
    netloc = f"[{host}]" if ":" in host else host
    if port != default:
        netloc = f"{netloc}:{port}"
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    head = (
        b"POST " + path.encode("ascii") + b" HTTP/1.1\r\n"
        b"Host: " + netloc.encode("ascii") + b"\r\n"
        b"Accept: */*\r\n"
        b"Accept-Encoding: " + _ACCEPT_ENCODING + b"\r\n"
        b"Connection: keep-alive\r\n"
        b"User-Agent: " + _USER_AGENT + b"\r\n"
    )
    return Target(host=host, port=port, tls=tls, head=head)


def proxies_in_environment() -> bool:
    """True when httpx would route calls through a proxy from the environment."""
    found = urllib.request.getproxies()
    return any(found.get(scheme) for scheme in ("http", "https", "all"))


class _Connection:
    __slots__ = ("idle_since", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    def usable(self, now: float, expiry: float) -> bool:
        # A server that closed (or wrote to) an idle connection has made it unusable.
        return (
            now - self.idle_since <= expiry
            and not self.writer.transport.is_closing()
            and not self.reader.at_eof()
            and not self.reader._buffer  # type: ignore[attr-defined]
        )

    def close(self) -> None:
        self.writer.transport.abort()


class Http11Pool:
    """Keep-alive HTTP/1.1 connections for JSON POSTs (see the module docstring)."""

    def __init__(
        self,
        tls: ssl.SSLContext,
        *,
        max_keepalive: int,
        keepalive_expiry: float = 5.0,
        use_httpx: bool | None = None,
    ) -> None:
        tls.set_alpn_protocols(["http/1.1"])
        self._tls = tls
        self._max_keepalive = max_keepalive
        self._expiry = keepalive_expiry
        self._idle: dict[tuple[str, int, bool], deque[_Connection]] = {}
        self._targets: dict[str, Target | None] = {}
        self._use_httpx = proxies_in_environment() if use_httpx is None else use_httpx
        self._fallback: httpx.AsyncClient | None = None

    def target(self, url: str) -> Target | None:
        """The URL's `Target`; None when its calls go through `fallback` instead."""
        try:
            return self._targets[url]
        except KeyError:
            found = None if self._use_httpx else _target(url)
            self._targets[url] = found
            return found

    def fallback(self) -> httpx.AsyncClient:
        if self._fallback is None:
            self._fallback = httpx.AsyncClient(
                timeout=None,
                verify=self._tls,
                limits=httpx.Limits(
                    max_connections=None, max_keepalive_connections=self._max_keepalive
                ),
            )
        return self._fallback

    async def post(self, target: Target, headers: bytes, body: bytes) -> tuple[int, bytes]:
        """POST `body` (JSON) to `target`; (status, decoded body). ``headers``: extra header
        lines, each ending in CRLF."""
        key = (target.host, target.port, target.tls)
        conn = self._take(key)
        if conn is None:
            conn = await self._open(target)
        request = b"".join(
            (
                target.head,
                headers,
                b"Content-Length: ",
                str(len(body)).encode("ascii"),
                b"\r\nContent-Type: application/json\r\n\r\n",
                body,
            )
        )
        reusable = False
        try:
            try:
                conn.writer.write(request)
                await conn.writer.drain()
            except OSError:
                raise HTTPCallError("WriteError") from None
            status, content, reusable = await _read_response(conn.reader)
        finally:
            if reusable:
                self._put(key, conn)
            else:
                conn.close()
        return status, content

    def _take(self, key: tuple[str, int, bool]) -> _Connection | None:
        idle = self._idle.get(key)
        if not idle:
            return None
        now = time.monotonic()
        while idle:
            conn = idle.pop()  # the most recently used: the least likely to be closed
            if conn.usable(now, self._expiry):
                return conn
            conn.close()
        return None

    def _put(self, key: tuple[str, int, bool], conn: _Connection) -> None:
        idle = self._idle.get(key)
        if idle is None:
            idle = self._idle[key] = deque()
        if len(idle) >= self._max_keepalive:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        idle.append(conn)

    async def _open(self, target: Target) -> _Connection:
        try:
            if target.tls:
                reader, writer = await asyncio.open_connection(
                    target.host, target.port, ssl=self._tls, server_hostname=target.host
                )
            else:
                reader, writer = await asyncio.open_connection(target.host, target.port)
        except (OSError, ssl.SSLError, UnicodeError):
            raise HTTPCallError("ConnectError") from None
        return _Connection(reader, writer)

    async def aclose(self) -> None:
        for idle in self._idle.values():
            while idle:
                idle.pop().close()
        if self._fallback is not None:
            await self._fallback.aclose()


async def _read_line(reader: asyncio.StreamReader) -> bytes:
    try:
        line = await reader.readuntil(_CRLF)
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        # Closed mid-answer (or before it), or a line longer than the stream's limit.
        raise HTTPCallError("RemoteProtocolError") from None
    except OSError:
        raise HTTPCallError("ReadError") from None
    return line[:-2]


async def _read_exactly(reader: asyncio.StreamReader, n: int) -> bytes:
    try:
        return await reader.readexactly(n)
    except asyncio.IncompleteReadError:
        raise HTTPCallError("RemoteProtocolError") from None
    except OSError:
        raise HTTPCallError("ReadError") from None


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes, bool]:
    """(status, decoded body, connection reusable) of one answer."""
    while True:
        version, status = _status_line(await _read_line(reader))
        headers: dict[bytes, bytes] = {}
        last = b""
        for _ in range(_MAX_HEADERS + 1):
            line = await _read_line(reader)
            if not line:
                break
            if line[:1] in (b" ", b"\t"):  # obsolete line folding, unfolded as h11 does
                if not last:
                    raise HTTPCallError("RemoteProtocolError")
                headers[last] = headers[last] + b" " + line.strip()
                continue
            name, sep, value = line.partition(b":")
            if not sep or not name or name != name.strip():
                raise HTTPCallError("RemoteProtocolError")
            name = name.lower()
            value = value.strip()
            # Repeated headers: joined as httpx's Headers.get does.
            headers[name] = headers[name] + b", " + value if name in headers else value
            last = name
        else:
            raise HTTPCallError("RemoteProtocolError")
        if status >= 200 or status == 101:
            break  # 1xx (100 Continue, 103 Early Hints): the real answer follows
    keep_alive = version == b"HTTP/1.1"
    connection = headers.get(b"connection", b"").lower()
    if b"close" in connection:
        keep_alive = False
    elif version == b"HTTP/1.0" and b"keep-alive" in connection:
        keep_alive = True
    if status in (101, 204, 304):
        body = b""
    elif b"chunked" in headers.get(b"transfer-encoding", b"").lower():
        body = await _read_chunked(reader)
    elif b"content-length" in headers:
        try:
            length = int(headers[b"content-length"].split(b",")[0])
        except ValueError:
            raise HTTPCallError("RemoteProtocolError") from None
        if length < 0:
            raise HTTPCallError("RemoteProtocolError")
        body = await _read_exactly(reader, length)
    else:
        try:
            body = await reader.read()  # to the close
        except OSError:
            raise HTTPCallError("ReadError") from None
        keep_alive = False
    if status == 101:
        keep_alive = False
    encoding = headers.get(b"content-encoding")
    if encoding:
        body = _decode(body, encoding)
    return status, body, keep_alive


def _status_line(line: bytes) -> tuple[bytes, int]:
    version, _, rest = line.partition(b" ")
    code = rest[:3]
    if version not in (b"HTTP/1.1", b"HTTP/1.0") or len(code) != 3 or not code.isdigit():
        raise HTTPCallError("RemoteProtocolError")
    if len(rest) > 3 and rest[3:4] != b" ":
        raise HTTPCallError("RemoteProtocolError")
    return version, int(code)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size_line = await _read_line(reader)
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise HTTPCallError("RemoteProtocolError") from None
        if size < 0:
            raise HTTPCallError("RemoteProtocolError")
        if size == 0:
            for _ in range(_MAX_HEADERS + 1):  # trailers, up to the empty line
                if not await _read_line(reader):
                    return b"".join(parts)
            raise HTTPCallError("RemoteProtocolError")
        parts.append(await _read_exactly(reader, size))
        if await _read_exactly(reader, 2) != _CRLF:
            raise HTTPCallError("RemoteProtocolError")


def _decode(body: bytes, encoding: bytes) -> bytes:
    """Undo each content coding, last applied first; unknown ones are left (as httpx does)."""
    codings = [c.strip().lower() for c in encoding.split(b",") if c.strip()]
    try:
        for coding in reversed(codings):
            if coding in (b"gzip", b"x-gzip"):
                body = _inflate(body, zlib.MAX_WBITS | 16)
            elif coding == b"deflate":
                try:
                    body = _inflate(body, zlib.MAX_WBITS)
                except zlib.error:
                    body = _inflate(body, -zlib.MAX_WBITS)  # raw deflate, as httpx allows
            elif coding == b"br" and brotli is not None:
                body = brotli.decompress(body)
    except Exception:  # zlib.error, brotli.error
        raise HTTPCallError("DecodingError") from None
    return body


def _inflate(data: bytes, wbits: int) -> bytes:
    inflater = zlib.decompressobj(wbits)
    return inflater.decompress(data) + inflater.flush()
