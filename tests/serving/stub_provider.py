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

Scripted behaviours for the evaluation suites (``Behaviour`` fields after ``malformed``):

* ``answers``: marker -> text; the first marker found in the request's prompt picks the text
  (the middle of a FiM answer, or the whole answer to a plain question): correct and wrong
  answers per problem;
* ``wrap``: ``"fence"``, ``"prose"`` or ``"prose_fence"`` dresses the answer in a markdown
  fence and/or sentences before and after it (FiM chat answers: instead of or around
  ``<CODE>``);
* ``judge``: answers judging prompts (``evaluations.judge``) with a verdict:
  ``"prefer:<marker>"`` gives ``[[A>>B]]``/``[[B>>A]]`` to the one answer containing the marker
  (``[[A=B]]`` if both or neither do), ``"always:<label>"`` always that label (a judge with
  position bias), ``"conflict"`` two different labels, ``"malformed"`` an invalid label,
  ``"none"`` no label at all;
* ``replies``: the n-th request for the model gets ``replies[n]`` verbatim, ``None`` meaning
  hang (the caller's timeout); once used up, the other fields apply (e.g. a malformed label
  first, a valid one on the retry).

Successful answers report ``usage`` as OpenAI's API does: ``prompt_tokens`` = characters of
the prompt (messages' contents, or prefix + suffix) // 4 + 1, ``completion_tokens`` =
characters of the answer // 4 + 1, and ``cost`` when ``Behaviour.cost`` is set (as
OpenRouter reports it).

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

from evaluations.judge import ANSWER_A, ANSWER_B


@dataclass
class Behaviour:
    latency: float = 0.0  # seconds before answering
    status: int = 200  # non-200: answer with an error body after the latency
    hang: bool = False  # never answer (until the connection is closed)
    middle: str | None = None  # completion text; default "# <model>"
    raw: str | None = None  # exact answer text, bypassing the FiM format
    malformed: bool = False  # 200 with no completion in it
    answers: dict[str, str] = field(default_factory=dict)  # prompt marker -> text
    wrap: str | None = None  # "fence" | "prose" | "prose_fence"
    judge: str | None = None  # "prefer:<marker>" | "always:<label>" | "conflict" | ...
    replies: list[str | None] = field(default_factory=list)  # per request, in order
    cost: float | None = None  # reported as usage.cost per call

    @property
    def scripted(self) -> bool:
        return bool(self.answers or self.wrap or self.judge or self.replies)


_PROSE = ("Sure! Here is the code you asked for:\n\n", "\n\nThis handles the edge cases too.")
_LABEL = re.compile(r"^[AB=<>]+$")


def _wrap(text: str, how: str | None) -> str:
    if how is None:
        return text
    if how == "fence":
        return f"```python\n{text}\n```"
    if how == "prose":
        return f"{_PROSE[0]}{text}{_PROSE[1]}"
    if how == "prose_fence":
        return f"{_PROSE[0]}```python\n{text}\n```{_PROSE[1]}"
    raise ValueError(f"unknown wrap {how!r}")


def _section(prompt: str, marks: tuple[str, str]) -> str:
    start = prompt.find(marks[0])
    end = prompt.find(marks[1], start)
    return prompt[start + len(marks[0]) : end] if start != -1 and end != -1 else ""


def _verdict(rule: str, prompt: str) -> str:
    """A judge's reply to a judging prompt, following ``rule`` (see the module docstring)."""
    reasoning = "My own answer first. Then: both answers address the question; comparing them."
    if rule.startswith("prefer:"):
        marker = rule.removeprefix("prefer:")
        in_a = marker in _section(prompt, ANSWER_A)
        in_b = marker in _section(prompt, ANSWER_B)
        label = "A>>B" if in_a and not in_b else "B>>A" if in_b and not in_a else "A=B"
        return f"{reasoning}\n\nMy final verdict is [[{label}]]."
    if rule.startswith("always:"):
        label = rule.removeprefix("always:")
        assert _LABEL.match(label), label
        return f"{reasoning}\n\nMy final verdict is [[{label}]]."
    if rule == "conflict":
        return f"{reasoning} At first [[A>B]], but on reflection [[B>A]]."
    if rule == "malformed":
        return f"{reasoning}\n\nMy final verdict is [[A>>>B]]."
    if rule == "none":
        return f"{reasoning} Both have merits; it is hard to choose."
    raise ValueError(f"unknown judge rule {rule!r}")


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
    calls: dict[str, int] = field(default_factory=dict)  # requests seen per model

    # --- configuration ---------------------------------------------------------------

    def behave(self, model: str, **kwargs) -> None:
        self.behaviours[model] = Behaviour(**kwargs)

    def reset(self) -> None:
        self.behaviours.clear()
        self.requests.clear()
        self.peak_in_flight = self.in_flight
        self.served = 0
        self.calls.clear()

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
        chat = path.endswith("/chat/completions")
        seen = (
            body["messages"][-1]["content"]
            if chat
            else f"{body.get('prompt', '')}{body.get('suffix', '')}"
        )
        middle = next((text for marker, text in b.answers.items() if marker in seen), None)
        if middle is None:
            middle = b.middle if b.middle is not None else f"# {model}"
        if not chat:
            return _wrap(middle, b.wrap)
        user = body["messages"][-1]["content"]
        judging = next(
            (m["content"] for m in body["messages"] if ANSWER_A[0] in m["content"]), None
        )
        if b.judge is not None and judging is not None:
            return _verdict(b.judge, judging)
        if "<SELECTION>" in user:
            return f"<CODE>\n{middle}\n</CODE>"
        prefix = re.search(r"<PREFIX>(.*)</PREFIX>", user, re.S)
        suffix = re.search(r"<SUFFIX>(.*)</SUFFIX>", user, re.S)
        if prefix is None and b.scripted:
            return _wrap(middle, b.wrap)  # a plain question: the answer itself
        last = prefix.group(1).rsplit("\n", 1)[-1] if prefix else ""
        first = suffix.group(1).split("\n", 1)[0] if suffix else ""
        if b.wrap in ("fence", "prose_fence"):
            return _wrap(f"{last}{middle}{first}", b.wrap)
        return _wrap(f"<CODE>{last}{middle}{first}</CODE>", b.wrap)

    def _answer(self, path: str, body: dict, b: Behaviour) -> tuple[int, dict]:
        if not path.endswith("/completions"):
            return 404, {"error": {"message": f"no route {path}"}}
        return self._shape(path, self._text(path, body, b), body, b)

    @staticmethod
    def _shape(path: str, text: str, body: dict, b: Behaviour) -> tuple[int, dict]:
        """The answer body of ``path``'s kind: chat and Mistral FiM carry a message."""
        seen = "".join(str(m.get("content", "")) for m in body.get("messages") or ())
        seen += f"{body.get('prompt', '')}{body.get('suffix', '')}"
        usage: dict = {"prompt_tokens": len(seen) // 4 + 1, "completion_tokens": len(text) // 4 + 1}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if b.cost is not None:
            usage["cost"] = b.cost
        if not path.endswith(("/chat/completions", "/fim/completions")):
            choices: list[dict] = [{"index": 0, "text": text}]
            return 200, {"object": "text_completion", "choices": choices, "usage": usage}
        message = {"role": "assistant", "content": text}
        choices = [{"index": 0, "message": message}]
        return 200, {"object": "chat.completion", "choices": choices, "usage": usage}

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
        model = str(body.get("model"))
        b = self.behaviours.get(model, self.default)
        turn = self.calls.get(model, 0)
        self.calls[model] = turn + 1
        scripted_reply = b.replies[turn] if turn < len(b.replies) else ""
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            if b.hang or (turn < len(b.replies) and scripted_reply is None):
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
            elif turn < len(b.replies):
                status, payload = self._shape(path, scripted_reply or "", body, b)
            else:
                status, payload = self._answer(path, body, b)
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
