"""Pseudonyms stored instead of client user ids and IP addresses (HMAC, keyed by settings).

`USER_ID_HMAC_KEY` keys the user pseudonyms and `IP_HASH_KEY` (by default the same) the IP
hashes; neither depends on `SECRET_KEY`, which can be rotated freely.
"""

from __future__ import annotations

import hmac

from django.conf import settings


def pseudonymise_user(user_id: str) -> str:
    """HMAC-SHA256 of the client's user id: stable per user, not reversible without the key."""
    # hmac.digest: OpenSSL's one-shot HMAC, the same value as hmac.new(...).hexdigest().
    key = settings.USER_ID_HMAC_KEY.encode()
    return hmac.digest(key, user_id.encode(), "sha256").hex()


def pseudonymise_ip(ip: str | None) -> str:
    if not ip:
        return ""
    key = settings.IP_HASH_KEY.encode()
    return hmac.digest(key, b"ip:" + ip.encode(), "sha256").hex()[:16]


def context_fingerprint(prefix: str, suffix: str) -> str:
    """Keyed 64-bit fingerprint of a code context; "" for an empty one. Stored for every
    vote so repeated contexts can be recognised without keeping any code."""
    if not (prefix or suffix):
        return ""
    key = settings.USER_ID_HMAC_KEY.encode()
    text = b"ctx:" + prefix.encode() + b"\x00" + suffix.encode()
    return hmac.digest(key, text, "sha256").hex()[:16]
