"""The client's IP address: the socket's peer, unless that peer is one of our own proxies.

Both the throttles and the stored `ip_hash` (and django-axes, and `/metrics`' address
check) use `client_ip`, so a client behind nginx is limited and recorded by its own address,
not the proxy's. `X-Forwarded-For` is read only when the request's peer (`REMOTE_ADDR`) is
inside `TRUSTED_PROXIES` (CIDRs: nginx on the same host is `127.0.0.1/32,::1/128`). Then
the header is read from the right, each hop a trusted proxy added, skipping the hops that
are themselves trusted proxies: the first address outside the list is the client, and
whatever a client wrote at the left is never reached. A request that comes straight to a
gunicorn pool from anywhere else is its socket address, whatever its headers say.

`UntrustedProxyHeadersMiddleware` applies the same rule to `X-Forwarded-Proto` (which tells
Django a request came over https): from a peer outside the list it is dropped.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@functools.lru_cache(maxsize=8)
def _networks(cidrs: tuple[str, ...]) -> tuple[Network, ...]:
    # settings.py refused an entry that is not a network at start-up.
    return tuple(ipaddress.ip_network(c.strip(), strict=False) for c in cidrs)


def _address(text: str | None) -> Address | None:
    if not text:
        return None
    text = text.strip()
    if text.startswith("[") and "]" in text:  # "[2001:db8::1]:443"
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # "203.0.113.7:5555"
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


def is_trusted_proxy(text: str | None) -> bool:
    address = _address(text)
    if address is None:
        return False
    return any(address in net for net in _networks(tuple(settings.TRUSTED_PROXIES)))


def client_ip(request: HttpRequest) -> str | None:
    """The client's address: REMOTE_ADDR, or from a trusted proxy the first untrusted hop."""
    meta = request.META
    remote: str | None = meta.get("REMOTE_ADDR")
    forwarded: str | None = meta.get("HTTP_X_FORWARDED_FOR")
    if not forwarded or not is_trusted_proxy(remote):
        return remote
    hops = [hop.strip() for hop in forwarded.split(",")]
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            # Not an address: nothing a real proxy writes; the last trusted peer stands.
            return remote
        if not is_trusted_proxy(hop):
            return str(address)
    return str(_address(hops[0]))  # every hop is one of ours: the first of them


class UntrustedProxyHeadersMiddleware:
    """Drops `X-Forwarded-Proto` unless the peer is a trusted proxy."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        meta = request.META
        if "HTTP_X_FORWARDED_PROTO" in meta and not is_trusted_proxy(meta.get("REMOTE_ADDR")):
            del meta["HTTP_X_FORWARDED_PROTO"]
        return self.get_response(request)
