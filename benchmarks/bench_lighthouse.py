#!/usr/bin/env python
"""Lighthouse scores and page weight of the public pages, this checkout against a reference (issue 15).

Run from the repository root with the project's venv, after ``npm ci`` in benchmarks/lighthouse/:

    .venv/bin/python benchmarks/bench_lighthouse.py --reference /tmp/lh-before   # ~25 min
    .venv/bin/python benchmarks/bench_lighthouse.py --runs 1 --no-docs           # this checkout only

The reference is another checkout with its own ``.venv`` (e.g. ``git worktree add
/tmp/lh-before 5125f79 && make -C /tmp/lh-before install``). Each checkout is served the way
production serves it: ``DEBUG=0``, ``collectstatic`` (WhiteNoise's compressed storage), gunicorn
in one process with four threads on loopback (the embedded page cache is per process), over an embedded SQLite database filled by ``load_demo``
(same seed, so the same pages). Pages: ``/``, a task-type board, a model page, ``/slices/`` and
``/correlations/``.

For each page, Lighthouse 12.2.3 (pinned in benchmarks/lighthouse/package-lock.json; 13.x
needs Node 22) runs with its mobile preset (simulated slow 4G, 4x CPU slowdown, 412 px screen)
and its desktop preset against Debian's Chromium; runs alternate between the checkouts so
both see the same machine load, and the table gives medians. Lighthouse's byte count stops at
its load end; a second, independent count loads every page in Playwright's Chromium at 390 px,
scrolls to the bottom, waits for every chart to be drawn and adds the encoded (on-the-wire)
size of every response, so lazily loaded scripts count too. The same visit takes the 390 px
screenshots of ``/`` for docs/figures/.

Figures go between the markers of the "## Pages (issue 15)" section of docs/performance.md
(text around the markers is kept).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from lighthouse_report import render, write_docs

ROOT = Path(__file__).resolve().parent.parent
LIGHTHOUSE = ROOT / "benchmarks" / "lighthouse" / "node_modules" / "lighthouse" / "cli" / "index.js"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROME_FLAGS = (
    "--headless --no-sandbox --disable-gpu --disable-background-networking "
    "--disable-component-update --disable-sync --no-first-run"
)
SHOT_HEIGHT = 2400  # px of the page top in the 390 px screenshots
ATTEMPTS = 3
CATEGORIES = ("performance", "accessibility", "best-practices")
METRICS = {
    "lcp": "largest-contentful-paint",
    "tbt": "total-blocking-time",
    "cls": "cumulative-layout-shift",
    "bytes": "total-byte-weight",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read().decode()


class Site:
    """One checkout served like production: DEBUG off, collected static files, gunicorn."""

    def __init__(self, checkout: Path, name: str) -> None:
        self.checkout, self.name = checkout, name
        self.tmp = Path(tempfile.mkdtemp(prefix=f"lh-{name}-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "DEBUG"}
        }
        self.env.update(
            DEBUG="0",
            SECRET_KEY=secrets.token_urlsafe(40),
            USER_ID_HMAC_KEY=secrets.token_urlsafe(40),
            SQLITE_PATH=str(self.tmp / "arena.sqlite3"),
            ALLOWED_HOSTS="127.0.0.1,localhost",
            SECURE_COOKIES="0",
        )
        self.bind = ["-b", f"127.0.0.1:{self.port}", "arena_site.wsgi"]
        self.server: subprocess.Popen[bytes] | None = None

    def manage(self, *args: str) -> None:
        py = str(self.checkout / ".venv" / "bin" / "python")
        subprocess.run(
            [py, "manage.py", *args],
            cwd=self.checkout,
            env=self.env,
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def __enter__(self) -> Site:
        print(f"[{self.name}] migrate, load_demo, collectstatic in {self.checkout}", flush=True)
        self.manage("migrate", "--noinput")
        self.manage("load_demo")
        self.manage("collectstatic", "--noinput", "--clear")
        gunicorn = str(self.checkout / ".venv" / "bin" / "gunicorn")
        self.server = subprocess.Popen(
            # One process (threads for parallel static requests): the embedded setup's page
            # cache is per process, and a warmed page must be warm for every request.
            [gunicorn, "-w", "1", "-k", "gthread", "--threads", "4", *self.bind],
            cwd=self.checkout,
            env=self.env,
            stderr=(self.tmp / "gunicorn.log").open("wb"),
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                get(self.url + "/healthz")
                break
            except OSError:
                if time.monotonic() > deadline or self.server.poll() is not None:
                    raise RuntimeError(f"gunicorn for {self.name} did not start") from None
                time.sleep(0.2)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(timeout=30)
        shutil.rmtree(self.tmp, ignore_errors=True)


def pages(site_url: str) -> dict[str, str]:
    """The five measured paths, taken from the demo board itself."""
    home = get(site_url + "/")
    categories = re.findall(r'<option value="(task_type:[^"]+)"', home)
    model = re.search(r'href="(/models/[^"]+/)"', home)
    if not categories or not model:
        raise RuntimeError("the demo board has no task-type category or no model link")
    return {
        "/": "/",
        "category board": f"/?category={categories[0]}",
        "model page": model.group(1),
        "/slices/": "/slices/",
        "/correlations/": "/correlations/",
    }


def lighthouse(url: str, preset: str, out: Path) -> dict:
    cmd = [
        "node",
        str(LIGHTHOUSE),
        url,
        "--quiet",
        "--output=json",
        f"--output-path={out}",
        f"--only-categories={','.join(CATEGORIES)}",
        f"--chrome-flags={CHROME_FLAGS}",
    ]
    if preset == "desktop":
        cmd.append("--preset=desktop")
    # Under load Chromium now and then loses the trace (NO_NAVSTART): run again, a few times.
    for attempt in range(1, ATTEMPTS + 1):
        done = subprocess.run(cmd, env={**os.environ, "CHROME_PATH": CHROMIUM}, timeout=300)
        if done.returncode == 0:
            break
        print(f"Lighthouse failed on {url} ({preset}), attempt {attempt} of {ATTEMPTS}", flush=True)
    else:
        raise RuntimeError(f"Lighthouse failed {ATTEMPTS} times on {url} ({preset})")
    report = json.loads(out.read_text())
    row = {c: round(100 * (report["categories"][c]["score"] or 0)) for c in CATEGORIES}
    for key, audit in METRICS.items():
        row[key] = report["audits"][audit]["numericValue"]
    row["flagged"] = sorted(
        a["id"]
        for c in CATEGORIES[1:]
        for ref in report["categories"][c]["auditRefs"]
        if ref["weight"] > 0
        and (a := report["audits"][ref["id"]])["score"] is not None
        and a["score"] < 1
    )
    return row


def browser_visit(site_url: str, path: str, width: int, shot: Path | None) -> dict:
    """Everything a visitor downloads at one width, lazily loaded parts included."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROME_FLAGS.split()[1:])
        ctx = browser.new_context(viewport={"width": width, "height": 844})
        page = ctx.new_page()
        responses: list = []
        errors: list[str] = []
        page.on("response", lambda r: responses.append(r))
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.goto(site_url + path, wait_until="load")
        page.evaluate(
            "async () => { for (let y = 0; y < document.body.scrollHeight; y += 400) {"
            " window.scrollTo(0, y); await new Promise(r => setTimeout(r, 50)); } }"
        )
        page.wait_for_function(
            "() => [...document.querySelectorAll('figure.chart')]"
            ".every(f => f.dataset.rendered === 'true')",
            timeout=60_000,
        )
        page.evaluate("() => window.scrollTo(0, 0)")
        scroll_width = page.evaluate("() => document.documentElement.scrollWidth")
        if shot is not None:
            # The top of the page at the document's own width: a page wider than the phone
            # shows as wider than 390 px.
            height = page.evaluate("() => document.documentElement.scrollHeight")
            clip = {"x": 0, "y": 0, "width": scroll_width, "height": min(SHOT_HEIGHT, height)}
            page.screenshot(path=str(shot), full_page=True, clip=clip)
        total = sum(r.request.sizes()["responseBodySize"] for r in responses)
        browser.close()
    return {
        "bytes": total,
        "requests": len(responses),
        "scroll_width": scroll_width,
        "errors": errors,
    }


def median_row(rows: list[dict]) -> dict:
    out = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k != "flagged"}
    out["flagged"] = sorted({a for r in rows for a in r["flagged"]})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, help="another checkout with its own .venv")
    parser.add_argument("--runs", type=int, default=3, help="Lighthouse runs per page and preset")
    parser.add_argument("--json", type=Path, help="write the medians here as well")
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument(
        "--from-json", type=Path, help="only rewrite the doc from a previous run's --json file"
    )
    args = parser.parse_args()
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        started = dt.datetime.fromisoformat(
            saved.get("started")
            or dt.datetime.fromtimestamp(args.from_json.stat().st_mtime, dt.UTC).isoformat()
        )
        names = saved.get("names") or list(saved["results"])
        runs = saved.get("runs", args.runs)
        lines = render(saved["results"], saved["visits"], names, saved["paths"], runs, started)
        print("\n".join(lines))
        if not args.no_docs:
            write_docs(lines)
        return
    if not LIGHTHOUSE.exists():
        raise SystemExit("Lighthouse is missing: run `npm ci` in benchmarks/lighthouse/ first.")

    checkouts = {"after": ROOT}
    if args.reference:
        checkouts = {"before": args.reference.resolve(), **checkouts}
    names = list(checkouts)
    started = dt.datetime.now(dt.UTC)
    sites = {n: Site(c, n) for n, c in checkouts.items()}
    raw: dict[str, dict[str, dict[str, list[dict]]]] = {n: {} for n in names}
    visits: dict[str, dict[str, dict]] = {n: {} for n in names}
    try:
        for s in sites.values():
            s.__enter__()
        paths = pages(sites["after"].url)
        for n, s in sites.items():
            for label, path in paths.items():
                get(s.url + path)  # warm the page cache: measure the front end, not the recompute
                shot = ROOT / "docs" / "figures" / f"board-390-{n}.png" if path == "/" else None
                visits[n][label] = {
                    w: browser_visit(s.url, path, w, shot if w == 390 else None)
                    for w in (390, 1400)
                }
        with tempfile.TemporaryDirectory() as tmp:
            for run in range(args.runs):
                for label, path in paths.items():
                    for preset in ("mobile", "desktop"):
                        for n, s in sites.items():
                            out = Path(tmp) / f"{n}-{run}-{preset}.json"
                            row = lighthouse(s.url + path, preset, out)
                            raw[n].setdefault(label, {}).setdefault(preset, []).append(row)
                            print(f"run {run + 1} {n:6} {preset:7} {label:15} {row}", flush=True)
    finally:
        for s in sites.values():
            s.__exit__()

    results = {
        n: {p: {k: median_row(v) for k, v in d.items()} for p, d in raw[n].items()} for n in names
    }
    if args.json:
        saved = {"results": results, "visits": visits, "paths": paths, "names": names}
        saved.update(runs=args.runs, started=started.isoformat())
        args.json.write_text(json.dumps(saved, indent=1))
    lines = render(results, visits, names, paths, args.runs, started)
    print("\n".join(lines))
    if not args.no_docs:
        write_docs(lines)


if __name__ == "__main__":
    main()
