"""`arena-healthcheck`: exit 0 when this container's pool answers /healthz with 200 (Docker HEALTHCHECK).

It asks HEALTHCHECK_URL (default http://127.0.0.1:8000/healthz?check=live) with the first name in
ALLOWED_HOSTS as Host, so an ALLOWED_HOSTS without "localhost" does not make it fail with
400. /healthz is exempt from the https redirect. Standard library only: it starts fast and
loads no Django.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.parse
import urllib.request

# live, not ready: a down worker or Redis must not take the web container out too.
DEFAULT_URL = "http://127.0.0.1:8000/healthz?check=live"


def host_header(allowed_hosts: str) -> str | None:
    for name in (h.strip() for h in allowed_hosts.split(",")):
        if name and name != "*":
            return name.lstrip(".")  # ".example.org" allows example.org itself
    return None


def main() -> int:
    url = os.environ.get("HEALTHCHECK_URL", DEFAULT_URL)
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        print(f"arena-healthcheck: {url}: not an http(s) URL", file=sys.stderr)
        return 1
    request = urllib.request.Request(url)  # noqa: S310  # http(s) only, checked above
    host = host_header(os.environ.get("ALLOWED_HOSTS", ""))
    if host:
        request.add_header("Host", host)
    try:
        # http(s) only, checked above (ruff S310 asks about file: and the like).
        with urllib.request.urlopen(request, timeout=4) as response:  # noqa: S310
            ok = response.status == 200
    except (urllib.error.URLError, OSError) as exc:
        print(f"arena-healthcheck: {url}: {exc}", file=sys.stderr)
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
