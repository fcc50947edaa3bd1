"""What the deployment smoke test checks through nginx, one function per claim.

Every request goes to nginx over TLS (the test's own certificate) with the Host a browser
would send, from a chosen loopback address (127.0.0.2, .3, ...): nginx sees that address as
the client, gunicorn sees nginx. Each check records one line in `Results`; the first
failure stops the run with what was expected and what came back. Standard library only.
"""

from __future__ import annotations

import gzip
import http.client
import json
import re
import ssl
import time
import uuid
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

HASHED = re.compile(r"\.[0-9a-f]{12}\.(?:js|css)$")


@dataclass
class Resp:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def header(self, name: str) -> str:
        return self.headers.get(name, "")

    def json(self):
        return json.loads(self.body)

    def text(self) -> str:
        raw = gzip.decompress(self.body) if self.header("Content-Encoding") == "gzip" else self.body
        return raw.decode("utf-8", "replace")


@dataclass
class Results:
    lines: list[str] = field(default_factory=list)

    def ok(self, line: str) -> None:
        self.lines.append(line)
        print(f"smoke: ok  {line}", flush=True)


def expect(condition: bool, what: str, got: object = "") -> None:
    if not condition:
        raise SystemExit(f"smoke: FAILED {what}" + (f"\n  got: {got!r}"[:2000] if got else ""))


class Client:
    """HTTPS (or plain http) to nginx on 127.0.0.1, as the browser at `src` would ask."""

    def __init__(self, *, https_port: int, http_port: int, cafile: Path, host: str) -> None:
        self.https_port, self.http_port, self.host = https_port, http_port, host
        self.context = ssl.create_default_context(cafile=str(cafile))

    def request(self, method: str, path: str, *, body=None, headers=None,
                src: str = "127.0.0.4", tls: bool = True) -> Resp:  # fmt: skip
        port = self.https_port if tls else self.http_port
        conn: http.client.HTTPConnection
        if tls:
            conn = http.client.HTTPSConnection(
                "127.0.0.1", port, context=self.context, source_address=(src, 0), timeout=90
            )
        else:
            conn = http.client.HTTPConnection(
                "127.0.0.1", port, source_address=(src, 0), timeout=90
            )
        h = {"Host": f"{self.host}:{port}", "User-Agent": "arena-smoke/1"}
        data = body
        if isinstance(body, dict | list):
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        try:
            conn.request(method, path, body=data, headers=h)
            r = conn.getresponse()
            return Resp(r.status, r.headers, r.read())
        finally:
            conn.close()

    @property
    def origin(self) -> str:
        return f"https://{self.host}:{self.https_port}"


def uid() -> str:
    return uuid.uuid4().hex[:12]


# --- pages and routes ---------------------------------------------------------------------


def pages_and_read_api(c: Client, r: Results, model_key: str) -> set[str]:
    """Every public page and read route answers 200; returns the URL patterns covered."""
    gets = {
        "": "/",
        "models/<path:key>/": f"/models/{model_key}/",
        "methodology/": "/methodology/",
        "slices/": "/slices/?dimension=task_type",
        "correlations/": "/correlations/",
        "external/": "/external/",
        "api/schema/": "/api/schema/",
        "api/docs/": "/api/docs/",
        "api/redoc/": "/api/redoc/",
        "api/v1/leaderboard": "/api/v1/leaderboard?category=overall",
        "api/v1/categories": "/api/v1/categories",
        "api/v1/slices": "/api/v1/slices?dimension=task_type",
        "api/v1/correlations": "/api/v1/correlations",
        "list_models": "/list_models",
        "healthz": "/healthz",
        "take-part/": "/take-part/",
        "data/": "/data/",
        "compare/": "/compare/",
    }
    for path in gets.values():
        resp = c.request("GET", path, headers={"Accept-Encoding": "gzip"})
        expect(resp.status == 200, f"GET {path} -> 200", (resp.status, resp.body[:300]))
    csv = c.request("GET", "/api/v1/leaderboard?category=overall&format=csv")
    expect(csv.status == 200 and b"," in csv.body, "GET leaderboard CSV", csv.status)
    r.ok(f"{len(gets) + 1} public pages and read routes answer 200 through nginx")
    return set(gets)


def accounts(c: Client, r: Results) -> set[str]:
    """The extension's account flow and the contributors' pages: register, log in, scores,
    the public and the private page, delete."""
    user, name = f"machine-{uid()}", f"smoke-{uid()[:8]}"
    reg = c.request("PUT", "/users", body={"userId": user, "username": name})
    expect(reg.status == 200, "PUT /users (register)", (reg.status, reg.body[:300]))
    auth = c.request("POST", "/users/authenticate", body={"userId": user})
    expect(auth.status == 200, "POST /users/authenticate", (auth.status, auth.body[:300]))
    personal = auth.json()["user"]["personalUrl"]
    scores = c.request("POST", "/user_scores", body={"userId": user})
    expect(scores.status == 200 and isinstance(scores.json(), list), "POST /user_scores",
           (scores.status, scores.body[:300]))  # fmt: skip
    for path in ("/contributors/", f"/contributors/{name}/", personal):
        resp = c.request("GET", path)
        expect(resp.status == 200, f"GET {path} -> 200", (resp.status, resp.body[:300]))
    gone = c.request("DELETE", "/users", body={"userId": user, "username": name})
    expect(gone.status == 204, "DELETE /users", (gone.status, gone.body[:300]))
    r.ok("accounts through nginx: register, authenticate, user_scores, contributor pages, delete")
    return {"users", "users/authenticate", "user_scores", "contributors/",
            "contributors/<str:username>/", "me/<str:token>/"}  # fmt: skip


def votes_and_pairs(c: Client, r: Results, *, api_key: str, models: list[str]) -> set[str]:
    """The write routes, the way their clients use them: the extension's flow end to end."""
    user = f"machine-{uid()}"
    pair = c.request("POST", "/create_pair", body={
        "pairId": str(uuid.uuid4()), "userId": user, "prefix": "def area(r):\n    return ",
        "suffix": "\n", "privacy": "Private", "modelTags": [],
    })  # fmt: skip
    expect(pair.status == 200, "POST /create_pair -> 200 (the pairs pool, the stub provider)",
           (pair.status, pair.body[:300]))  # fmt: skip
    p = pair.json()
    items = p["completionItems"]
    expect(len(items) == 2 and items[0]["model"] != items[1]["model"], "two models", items)
    for item in items:
        shown = {**item, "version": "smoke", "privacy": "Private", "fileType": "python",
                 "pairId": p["pairId"]}  # fmt: skip
        resp = c.request("PUT", "/add_completion", body=shown)
        expect(resp.status == 200, "PUT /add_completion", (resp.status, resp.body[:300]))
    outcome = {"pairId": p["pairId"], "userId": user, "acceptedIndex": 0, "version": "smoke",
               "privacy": "Private", "fileType": "python", "completionItems": items}  # fmt: skip
    resp = c.request("PUT", "/add_completion_outcome", body=outcome)
    expect(resp.status == 200 and resp.json()["created"], "PUT /add_completion_outcome", resp.body)
    single = {**items[0], "userId": user, "version": "smoke", "accepted": True}
    resp = c.request("PUT", "/add_single_outcome", body=single)
    expect(resp.status == 200, "PUT /add_single_outcome", (resp.status, resp.body[:300]))

    edit = c.request("POST", "/create_edit_pair", body={
        "pairId": str(uuid.uuid4()), "userId": user, "prefix": "def total(xs):\n",
        "suffix": "\n", "privacy": "Private", "language": "python",
        "codeToEdit": "    t = 0\n    for x in xs:\n        t += x\n    return t",
        "userInput": "use the builtin",
    })  # fmt: skip
    expect(edit.status == 200, "POST /create_edit_pair -> 200", (edit.status, edit.body[:300]))
    e = edit.json()
    resp = c.request("PUT", "/add_edit_outcome", body={
        "pairId": e["pairId"], "userId": user, "responseItems": e["responseItems"],
        "acceptedIndex": 1, "version": "smoke", "privacy": "Private", "fileType": "python",
    })  # fmt: skip
    expect(resp.status == 200, "PUT /add_edit_outcome", (resp.status, resp.body[:300]))

    native = {"pair_id": f"native-{uid()}", "user_id": user, "model_a": models[0],
              "model_b": models[1], "outcome": "model_b", "privacy": "Private"}  # fmt: skip
    resp = c.request("POST", "/api/v1/battles", body=native)
    expect(resp.status == 201, "POST /api/v1/battles -> 201", (resp.status, resp.body[:300]))
    batch = {"battles": [{**native, "pair_id": f"batch-{uid()}"} for _ in range(3)]}
    resp = c.request("POST", "/api/v1/battles/batch", body=batch,
                     headers={"Authorization": f"Bearer {api_key}"})  # fmt: skip
    expect(resp.status == 201 and resp.json()["created"] == 3, "batch -> 201", resp.body)
    resp = c.request("POST", "/user_vote_count", body={"userId": user})
    expect(resp.status == 200 and resp.json()["voteCount"] >= 2, "vote count", resp.body)
    r.ok("pair and vote routes answer through nginx: create_pair, add_completion, "
         "add_completion_outcome, add_single_outcome, create_edit_pair, add_edit_outcome, "
         "api/v1/battles, api/v1/battles/batch (API key), user_vote_count")  # fmt: skip
    return {"create_pair", "create_edit_pair", "add_completion", "add_completion_outcome",
            "add_single_outcome", "add_edit_outcome", "api/v1/battles", "api/v1/battles/batch",
            "user_vote_count"}  # fmt: skip


def pairs_pool_served_the_pairs(r: Results, logs: Path) -> None:
    pairs = (logs / "pairs.log").read_text() + (logs / "pairs.out").read_text()
    web = (logs / "web.log").read_text() + (logs / "web.out").read_text()
    expect("/create_pair" in pairs and "/create_edit_pair" in pairs,
           "the pairs pool's access log has the pair requests", pairs[-500:])  # fmt: skip
    expect("/create_pair" not in web, "the web pool never saw a pair request")
    expect("/add_completion_outcome" in web and "/add_completion_outcome" not in pairs,
           "votes went to the web pool")  # fmt: skip
    r.ok("/create_pair and /create_edit_pair reached the pairs pool, the votes the web pool")


# --- proxy, TLS, admin ----------------------------------------------------------------


def tls_and_redirects(c: Client, r: Results) -> None:
    resp = c.request("GET", "/methodology/", tls=False)
    location = resp.header("Location")
    expect(resp.status == 301 and location.startswith(f"https://{c.host}/methodology/"),
           "plain http is redirected to https by nginx", (resp.status, location))  # fmt: skip
    resp = c.request("GET", "/methodology/")
    hsts = resp.header("Strict-Transport-Security")
    expect("max-age=31536000" in hsts and "includeSubDomains" in hsts and "preload" in hsts,
           "HSTS on https answers (the app sees https through X-Forwarded-Proto)", hsts)  # fmt: skip
    r.ok("http -> https redirect (nginx); HSTS sent (the app trusts X-Forwarded-Proto)")


def admin_login(c: Client, r: Results, *, username: str, password: str) -> None:
    resp = c.request("GET", "/admin/")
    expect(resp.status == 302 and resp.header("Location") == "/admin/login/?next=/admin/",
           "/admin/ redirects to the login page", (resp.status, resp.header("Location")))  # fmt: skip
    login = c.request("GET", "/admin/login/?next=/admin/")
    cookies = SimpleCookie()
    for value in login.headers.get_all("Set-Cookie") or []:
        cookies.load(value)
        expect("Secure" in value and "csrftoken" in value, "the CSRF cookie is Secure", value)
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', login.body)
    expect(token is not None, "the login form has a CSRF token")
    assert token is not None
    form = urlencode({"csrfmiddlewaretoken": token.group(1).decode(), "username": username,
                      "password": password, "next": "/admin/"}).encode()  # fmt: skip
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Cookie": f"csrftoken={cookies['csrftoken'].value}",
        "Origin": c.origin,
        "Referer": f"{c.origin}/admin/login/?next=/admin/",
    }
    resp = c.request("POST", "/admin/login/?next=/admin/", body=form, headers=headers)
    expect(resp.status == 302 and resp.header("Location") == "/admin/",
           "admin login over https with CSRF_TRUSTED_ORIGINS", (resp.status, resp.body[:500]))  # fmt: skip
    session = [v for v in resp.headers.get_all("Set-Cookie") or [] if v.startswith("sessionid")]
    expect(len(session) == 1 and "Secure" in session[0] and "HttpOnly" in session[0],
           "the session cookie is Secure and HttpOnly", session)  # fmt: skip
    sid = session[0].split(";")[0]
    resp = c.request("GET", "/admin/", headers={"Cookie": sid})
    expect(
        resp.status == 200 and b"Site administration" in resp.body, "the admin index", resp.status
    )
    r.ok("/admin/ redirects to login; login works through the proxy; Secure cookies")


def real_client_ip(c: Client, r: Results, *, models: list[str], shell) -> None:
    """A forged X-Forwarded-For is not believed: the stored ip_hash is the real client's."""
    pair_id = f"xff-{uid()}"
    body = {"pair_id": pair_id, "user_id": f"u-{uid()}", "model_a": models[0],
            "model_b": models[1], "outcome": "model_a", "privacy": "Private"}  # fmt: skip
    resp = c.request("POST", "/api/v1/battles", body=body, src="127.0.0.2",
                     headers={"X-Forwarded-For": "203.0.113.77"})  # fmt: skip
    expect(resp.status == 201, "vote with a forged X-Forwarded-For", resp.body)
    found = json.loads(shell(
        "import json; from ingest.models import Battle; from ingest.pseudonyms import "
        "pseudonymise_ip as h; print(json.dumps({'stored': Battle.objects.get(pair_id="
        f"{pair_id!r}).ip_hash, 'real': h('127.0.0.2'), 'forged': h('203.0.113.77'), "
        "'nginx': h('127.0.0.1')}))"
    ).strip().splitlines()[-1])  # fmt: skip
    expect(found["stored"] == found["real"] and found["real"] not in (found["forged"], found["nginx"]),
           "ip_hash is the real client's (127.0.0.2), not the forged or nginx's", found)  # fmt: skip
    r.ok("a vote posted with a forged X-Forwarded-For is stored with the real client's ip_hash")


def throttled_per_real_client(c: Client, r: Results, *, models: list[str], limit: int) -> None:
    """THROTTLE_VOTE_IP is `limit`/hour for the run: the limit holds per real client."""

    def vote(src: str, forged: str) -> int:
        body = {"pair_id": f"thr-{uid()}", "user_id": f"u-{uid()}", "model_a": models[0],
                "model_b": models[1], "outcome": "model_a", "privacy": "Private"}  # fmt: skip
        return c.request("POST", "/api/v1/battles", body=body, src=src,
                         headers={"X-Forwarded-For": forged}).status  # fmt: skip

    # The real client changes its forged address on every vote: still one client. Windows
    # are fixed hours: if one ended during the check, the count restarted; try once more
    # from a fresh client.
    for attempt, src in enumerate(("127.0.0.3", "127.0.0.6")):
        hour = int(time.time() // 3600)
        codes = [vote(src, f"198.51.100.{i}") for i in range(limit + 1)]
        if hour == int(time.time() // 3600) or attempt == 1:
            break
    expect(codes[:limit] == [201] * limit and codes[limit] == 429,
           f"{limit} votes then 429 for one real client whatever X-Forwarded-For says", codes)  # fmt: skip
    expect(vote("127.0.0.5", "198.51.100.1") == 201, "another real client is not throttled")
    r.ok(f"throttled per real client: {limit} votes/hour from {src} under {limit + 1} "
         "forged X-Forwarded-For values, then 429; 127.0.0.5 unaffected")  # fmt: skip


# --- static files -----------------------------------------------------------------------


def static_files(c: Client, r: Results) -> list[str]:
    page = c.request("GET", "/").text()
    urls = re.findall(r'(?:src|href)="(/static/[^"]+)"', page)
    expect(len(urls) >= 3, "the board links its stylesheet and scripts", urls)
    for url in urls:
        expect(bool(HASHED.search(url)), f"{url} has a content hash in its name")
        for encoding in ("gzip", "br"):
            resp = c.request("GET", url, headers={"Accept-Encoding": encoding})
            cache = resp.header("Cache-Control")
            expect(resp.status == 200 and resp.header("Content-Encoding") == encoding,
                   f"{url} comes {encoding}-compressed", (resp.status, dict(resp.headers)))  # fmt: skip
            expect("max-age=315360000" in cache and "immutable" in cache,
                   f"{url} is cached for years", cache)  # fmt: skip
    r.ok(f"{len(urls)} static files on / have hashed names, come gzip and brotli "
         "compressed, Cache-Control max-age=315360000 immutable")  # fmt: skip
    return urls


# --- metrics ------------------------------------------------------------------------------


def canonical(sample: str) -> str:
    """`name{b="2",a="1"}` as `name{a="1",b="2"}`: the two collectors order labels differently."""
    name, brace, rest = sample.partition("{")
    if not brace:
        return sample
    labels = sorted(re.findall(r'(\w+="(?:[^"\\]|\\.)*")', rest))
    return f"{name}{{{','.join(labels)}}}"


def metrics(c: Client, r: Results) -> dict[str, float]:
    resp = c.request("GET", "/metrics", src="127.0.0.1")
    expect(resp.status == 200, "/metrics from the host", (resp.status, resp.body[:300]))
    values: dict[str, float] = {}
    for line in resp.body.decode().splitlines():
        if line and not line.startswith("#"):
            sample, _, number = line.rpartition(" ")
            values[canonical(sample)] = float(number)
    refused = c.request("GET", "/metrics", src="127.0.0.2")
    expect(refused.status == 403, "/metrics refused to another client by nginx", refused.status)
    want = {
        'arena_votes_total{result="stored",route="add_completion_outcome"}': 1,  # labels sorted
        'arena_votes_total{result="rejected_throttled",route="battles"}': 1,
        'arena_pairs_total{kind="pair",result="ok"}': 1,  # counted in the pairs pool
        'arena_recompute_seconds_count{outcome="published"}': 1,  # counted in the worker
    }
    for name, least in want.items():
        expect(values.get(name, 0) >= least, f"/metrics has {name} >= {least}",
               sorted(k for k in values if k.startswith("arena_")))  # fmt: skip
    expect(any(k.startswith("arena_provider_latency_seconds_count{") for k in values),
           "provider latency per model")  # fmt: skip
    expect("arena_snapshot_age_seconds" in values, "snapshot age")
    expect(any(k.startswith("arena_celery_queue_depth{") for k in values), "queue depth")
    r.ok("/metrics (host only) adds up the web pool, the pairs pool and the worker: votes by "
         "result, pairs, provider latency, recompute duration, snapshot age, queue depth")  # fmt: skip
    return values


def json_logs(r: Results, logs: Path) -> None:
    """Every line the pools, the worker and beat wrote, on stdout and stderr, is JSON."""
    for name in ("web", "pairs", "worker", "beat"):
        lines = [
            x
            for stream in (f"{name}.log", f"{name}.out")
            for x in (logs / stream).read_text().splitlines()
            if x.strip()
        ]
        bad = [x for x in lines if not x.startswith("{")]
        expect(
            lines and not bad, f"every line of {name}'s output is JSON (LOG_FORMAT=json)", bad[:3]
        )
        for x in lines:
            json.loads(x)
    r.ok("LOG_FORMAT=json: every line both pools, the worker and beat wrote is a JSON object")
