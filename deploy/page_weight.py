"""Bytes a first visit of a page transfers: the HTML and every stylesheet and script it loads.

    python3 deploy/page_weight.py http://127.0.0.1:8000/ [--host arena.example.org] [--json]

Asks the way a browser does (``Accept-Encoding: gzip, br``, empty cache) and counts the bytes
on the wire (the compressed body, as the server sent it); images and fonts are not counted
(the site has none). The smoke test reports this for ``/``; standard library only, so it
runs with any Python 3.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import urllib.request
from dataclasses import asdict, dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin


@dataclass
class Asset:
    url: str
    status: int
    wire_bytes: int
    encoding: str
    cache_control: str


class _Assets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.urls.append(str(a["src"]))
        elif tag == "link" and a.get("rel") == "stylesheet" and a.get("href"):
            self.urls.append(str(a["href"]))


def fetch(url: str, host: str | None = None) -> tuple[Asset, bytes]:
    headers = {"Accept-Encoding": "gzip, br", "User-Agent": "page-weight/1"}
    if host:
        headers["Host"] = host
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
        body = r.read()
        return (
            Asset(
                url=url,
                status=r.status,
                wire_bytes=len(body),
                encoding=r.headers.get("Content-Encoding", "identity"),
                cache_control=r.headers.get("Cache-Control", ""),
            ),
            body,
        )


def first_visit(url: str, host: str | None = None) -> list[Asset]:
    page, body = fetch(url, host)
    if page.encoding == "gzip":
        body = gzip.decompress(body)
    elif page.encoding != "identity":  # brotli: not in the standard library; ask plainly
        plain = urllib.request.Request(url, headers={"Host": host} if host else {})
        with urllib.request.urlopen(plain, timeout=30) as r:
            body = r.read()
    parser = _Assets()
    parser.feed(body.decode("utf-8", "replace"))
    return [page] + [fetch(urljoin(url, u), host)[0] for u in parser.urls]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("url")
    parser.add_argument("--host", help="Host header to send (when the URL is an IP address)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    assets = first_visit(args.url, args.host)
    total = sum(a.wire_bytes for a in assets)
    if args.json:
        print(json.dumps({"total_bytes": total, "assets": [asdict(a) for a in assets]}, indent=1))
        return 0
    for a in assets:
        print(f"{a.wire_bytes:>10,}  {a.status}  {a.encoding:<8} {a.url}")
    print(f"{total:>10,}  total for a first visit of {args.url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
