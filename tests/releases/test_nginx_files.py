"""The release files are served by nginx with the shipped `location /data/files/` block, not
by the app: the page comes through nginx from the app, the files from the directory."""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import importlib.util
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.releases.helpers import post, release

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_ROOT = "/srv/arena/releases/"

pytestmark = pytest.mark.django_db(transaction=True)


def _smoke_stack():
    spec = importlib.util.spec_from_file_location("smoke_stack", ROOT / "deploy" / "smoke_stack.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("smoke_stack", module)  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


def shipped_location() -> str:
    text = (ROOT / "deploy" / "nginx.conf").read_text()
    block = re.search(r"    location /data/files/ \{.*?\n    \}\n", text, re.S)
    assert block, "deploy/nginx.conf has no location /data/files/ block"
    return block.group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def nginx(live_server, tmp_path, release_dir):
    prefix, port = tmp_path / "nginx", _free_port()
    logs = prefix / "logs"
    logs.mkdir(parents=True)
    origin = live_server.url.rsplit(":", 1)[1]
    site = prefix / "site.conf"
    site.write_text(
        f"server {{\n    listen 127.0.0.1:{port};\n"
        + shipped_location().replace(SHIPPED_ROOT, f"{release_dir}/")
        + f"    location / {{ proxy_pass http://127.0.0.1:{origin}; }}\n}}\n"
    )
    conf = _smoke_stack().nginx_main_conf(prefix, site, logs)
    if os.geteuid() == 0:
        conf = f"user root;\n{conf}"  # nobody cannot enter pytest's private directories
    main = prefix / "nginx.conf"
    main.write_text(conf)
    subprocess.run(["nginx", "-t", "-p", str(prefix), "-c", str(main)], check=True)
    proc = subprocess.Popen(["nginx", "-p", str(prefix), "-c", str(main)])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            break
        assert proc.poll() is None, (logs / "nginx-main-error.log").read_text()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.05)
    yield port, int(origin)
    proc.terminate()
    proc.wait(timeout=30)


def get(port: int, path: str) -> tuple[int, bytes, http.client.HTTPMessage]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read(), r.headers
    finally:
        conn.close()


def test_nginx_serves_the_files_the_page_links(nginx, models, keyed_api):
    port, origin = nginx
    for n in range(3):
        post(keyed_api, n, user=f"dev-{n}")
    made = release()
    status, page, _ = get(port, "/data/")
    assert status == 200 and f"Release {made.version}".encode() in page
    for entry in made.files:
        url = f"/data/files/{made.version}/{entry['name']}"
        assert f'href="{url}"'.encode() in page
        status, body, headers = get(port, url)
        assert status == 200, url
        assert hashlib.sha256(body).hexdigest() == entry["sha256"]
        assert headers["Cache-Control"] == "public, max-age=86400"
        # The app itself has no such route (outside DEBUG): nginx answered from the disk.
        assert get(origin, url)[0] == 404
