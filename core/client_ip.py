"""The client's IP address, honouring `NUM_PROXIES` trusted reverse proxies in front of us.

Both the throttles and the stored `ip_hash` use this one function, so a client behind
nginx is limited and recorded by its own address, not the proxy's. With `NUM_PROXIES = 0`
(the default) `X-Forwarded-For` is ignored: a client could write anything there. With N
proxies the address N entries from the right of `X-Forwarded-For` is taken — the one the
outermost trusted proxy saw — so entries a client forged at the left are never used.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str | None:
    """The address of the client as seen by the outermost trusted proxy (or REMOTE_ADDR)."""
    meta = request.META
    remote: str | None = meta.get("REMOTE_ADDR")
    proxies: int = settings.NUM_PROXIES
    forwarded: str | None = meta.get("HTTP_X_FORWARDED_FOR")
    if not proxies or not forwarded:
        return remote
    hops = [hop.strip() for hop in forwarded.split(",")]
    return hops[-min(proxies, len(hops))] or remote
