"""nginx with the shipped read cache in front of one app address, for the test and the benchmark.

`site_config` assembles a site file from the shipped pieces as an operator would: the
`proxy_cache_path` line that deploy/nginx.conf carries commented out, and
deploy/nginx-read-cache.conf included as it is. Only the cache directory and the ports
differ. `start` runs nginx in the foreground under a private prefix (deploy/smoke_stack.py's
main config), so nothing of the machine's own nginx is touched.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

DEPLOY = Path(__file__).resolve().parent
SHIPPED_CACHE_DIR = "/var/cache/nginx/arena"


def cache_path_line(shipped: str) -> str:
    """The commented `proxy_cache_path` line of deploy/nginx.conf, uncommented."""
    found = re.findall(r"^# (proxy_cache_path .*;)$", shipped, flags=re.M)
    if len(found) != 1:
        raise SystemExit(f"deploy/nginx.conf: expected one commented proxy_cache_path, got {found}")
    return found[0]


def site_config(*, origin_port: int, port: int, cache_dir: Path, logs: Path) -> str:
    shipped = (DEPLOY / "nginx.conf").read_text()
    line = cache_path_line(shipped)
    if SHIPPED_CACHE_DIR not in line:
        raise SystemExit(f"deploy/nginx.conf: the cache is no longer in {SHIPPED_CACHE_DIR}")
    return f"""
{line.replace(SHIPPED_CACHE_DIR, str(cache_dir))}
upstream arena_web {{
    server 127.0.0.1:{origin_port};
    keepalive 16;
}}
server {{
    listen 127.0.0.1:{port};
    server_name localhost;
    access_log {logs / "nginx-access.log"};
    error_log {logs / "nginx-error.log"};
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host $host;
    include {DEPLOY / "nginx-read-cache.conf"};
    location / {{
        proxy_pass http://arena_web;
    }}
}}
"""


def _smoke_stack():
    """deploy/smoke_stack.py (deploy/ is not a package: it is not shipped in the wheel)."""
    name = "smoke_stack"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DEPLOY / "smoke_stack.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[name]


def start(
    *, origin_port: int, port: int, prefix: Path, workers: int = 1
) -> subprocess.Popen[bytes]:
    """nginx on 127.0.0.1:`port` caching the app at `origin_port`; the caller stops it."""
    smoke_stack = _smoke_stack()
    logs, cache = prefix / "logs", prefix / "cache"
    for d in (logs, cache):
        d.mkdir(parents=True, exist_ok=True)
    site = prefix / "site.conf"
    site.write_text(site_config(origin_port=origin_port, port=port, cache_dir=cache, logs=logs))
    main = prefix / "nginx.conf"
    conf = smoke_stack.nginx_main_conf(prefix, site, logs)
    conf = conf.replace("worker_processes 1;", f"worker_processes {workers};")
    if os.geteuid() == 0:
        # Started as root, nginx's workers would run as nobody, who cannot enter a private
        # temporary directory (pytest's and mkdtemp's are 0700) to write the cache.
        conf = f"user root;\n{conf}"

    conf = conf.replace("worker_connections 256;", "worker_connections 1024;")
    main.write_text(conf)
    subprocess.run(
        ["nginx", "-t", "-p", str(prefix), "-c", str(main)], check=True, capture_output=True
    )
    proc = subprocess.Popen(["nginx", "-p", str(prefix), "-c", str(main)])
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return proc
        # Not listening yet: wait for nginx to exit (a bad config) or 50 ms, then look again.
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=0.05)
    proc.kill()
    raise RuntimeError(f"nginx did not start (logs in {logs})")
