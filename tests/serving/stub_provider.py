"""A stub LLM provider on 127.0.0.1 for tests and benchmarks (no external network).

It speaks the three provider kinds' routes -- ``/v1/chat/completions``,
``/v1/completions`` and ``/v1/fim/completions`` -- on a small asyncio HTTP/1.1 server
(keep-alive, Content-Length bodies), and answers per remote model name with a configurable
latency, HTTP error, hang, or text:

* chat routes answer the way the FiM prompt asks: ``<CODE>`` + the prompt's last prefix
  line + the model's middle + its first suffix line + ``</CODE>``, so the server's clean-up
  must recover the middle; edit prompts (with ``<SELECTION>``) get ``<CODE>\\n`` + the middle
  + ``\\n</CODE>``;
* FiM routes answer with the middle itself.

Every request is recorded (path, headers, JSON body) and the peak number of requests in
flight is tracked, so tests can check concurrency and what was sent. Error bodies echo the
``Authorization`` header, as some real providers echo (masked) keys: the server must never
pass error bodies on.

In-process (tests): ``with StubProvider() as stub: stub.behave("m", latency=0.5)``.
As a process (benchmarks): ``python -m tests.serving.stub_provider --port 9100 --latency 1``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import threading
from dataclasses import dataclass, field


@dataclass
class Behaviour:
    latency: float = 0.0  # seconds before answering
    status: int = 200  # non-200: answer with an error body after the latency
    hang: bool = False  # never answer (until the connection is closed)
    middle: str | None = None  # completion text; default "# <model>"
    raw: str | None = None  # exact answer text, bypassing the FiM format
    malformed: bool = False  # 200 with no completion in it


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict


@dataclass
class StubProvider:
    host: str = "127.0.0.1"
    port: int = 0
    default: Behaviour = field(default_factory=Behaviour)
    behaviours: dict[str, Behaviour] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    record: bool = True
    in_flight: int = 0
    peak_in_flight: int = 0
    served: int = 0

    # --- configuration ---------------------------------------------------------------

    def behave(self, model: str, **kwargs) -> None:
        self.behaviours[model] = Behaviour(**kwargs)

    def reset(self) -> None:
        self.behaviours.clear()
        self.requests.clear()
        self.peak_in_flight = self.in_flight
        self.served = 0

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def for_model(self, model: str) -> list[Recorded]:
        return [r for r in self.requests if r.body.get("model") == model]

    # --- answers -----------------------------------------------------------------------

    def _text(self, path: str, body: dict, b: Behaviour) -> str:
        model = str(body.get("model", ""))
        if b.raw is not None:
            return b.raw
        middle = b.middle if b.middle is not None else f"# {model}"
        if not path.endswith("/chat/completions"):
            return middle
        user = body["messages"][-1]["content"]
        if "<SELECTION>" in user:
            return f"<CODE>\n{middle}\n</CODE>"
        prefix = re.search(r"<PREFIX>(.*)</PREFIX>", user, re.S)
        suffix = re.search(r"<SUFFIX>(.*)</SUFFIX>", user, re.S)
        last = prefix.group(1).rsplit("\n", 1)[-1] if prefix else ""
        first = suffix.group(1).split("\n", 1)[0] if suffix else ""
        return f"<CODE>{last}{middle}{first}</CODE>"

    def _answer(self, path: str, body: dict) -> tuple[int, dict]:
        if path.endswith("/chat/completions"):
            shape = "chat"
        elif path.endswith("/fim/completions"):
            shape = "fim"
        elif path.endswith("/completions"):
            shape = "text"
        else:
            return 404, {"error": {"message": f"no route {path}"}}
        text = self._text(path, body, self.behaviours.get(str(body.get("model")), self.default))
        if shape == "text":
            return 200, {"object": "text_completion", "choices": [{"index": 0, "text": text}]}
        message = {"role": "assistant", "content": text}
        return 200, {"object": "chat.completion", "choices": [{"index": 0, "message": message}]}

    # --- HTTP ----------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                method, path, _ = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = h.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                raw = await reader.readexactly(int(headers.get("content-length", "0")))
                body = json.loads(raw) if raw else {}
                await self._respond(writer, method, path, headers, body)
                if headers.get("connection", "").lower() == "close":
                    return
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            return
        except asyncio.CancelledError:
            # Shutting down: end quietly (a cancelled connection task makes asyncio's
            # stream callback log a traceback).
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _respond(self, writer, method: str, path: str, headers: dict, body: dict) -> None:
        if self.record:
            self.requests.append(Recorded(path, headers, body))
        b = self.behaviours.get(str(body.get("model")), self.default)
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if b.hang:
                await asyncio.sleep(3600)
            if b.latency:
                await asyncio.sleep(b.latency)
            if method != "POST":
                status, payload = 405, {"error": {"message": "POST only"}}
            elif b.malformed:
                status, payload = 200, {"choices": []}
            elif b.status != 200:
                # Echo the credentials like a careless provider would.
                status = b.status
                payload = {
                    "error": {
                        "message": f"Incorrect API key provided: {headers.get('authorization')}",
                        "prompt_seen": json.dumps(body)[:200],
                    }
                }
            else:
                status, payload = self._answer(path, body)
        finally:
            self.in_flight -= 1
        data = json.dumps(payload).encode()
        head = (
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n"
        ).encode()
        writer.write(head + data)
        await writer.drain()
        self.served += 1

    # --- lifecycle -----------------------------------------------------------------------

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, self.port, backlog=2048)
        self.port = self._server.sockets[0].getsockname()[1]

    def start(self) -> StubProvider:
        """Serve on a daemon thread with its own event loop; returns self once listening."""
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self._start())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="stub-provider", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        async def shutdown() -> None:
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> StubProvider:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds, every model")
    args = parser.parse_args()
    stub = StubProvider(port=args.port, default=Behaviour(latency=args.latency), record=False)

    async def serve() -> None:
        await stub._start()
        print(f"stub provider on {stub.base_url}, latency {args.latency} s", flush=True)
        await stub._server.serve_forever()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


if __name__ == "__main__":
    main()
