"""The secret scan of released text: detect-secrets' detectors plus high-entropy tokens.

detect-secrets (Yelp's scanner; its plugins know cloud keys, private-key blocks, service
tokens, passwords in URLs and `password = "..."` assignments) runs on every line of a text.
Its own entropy detectors only look at quoted strings, so a bare token (an `.env` value,
the body of a PEM block, a key pasted into a comment) is caught here by the same Shannon
entropy limits applied to every long run of token characters.

A match the library's own default heuristics call a false positive (a sequential string, a
UUID, an id, a template placeholder, `$VARIABLE`, `x = get_secret()`, no letters or digits)
is not counted, as in a `detect-secrets scan`. `findings` names what was found, never the
secret itself (the caller counts and drops;
nothing here logs or returns a matched value). A finding costs the row its code, never its
vote: over-flagging is the safe side.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.filters import heuristic
from detect_secrets.plugins.base import BasePlugin
from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HexHighEntropyString,
)
from detect_secrets.plugins.keyword import DENYLIST, KeywordDetector

HIGH_ENTROPY = "High entropy token"
# detect-secrets' default limits for its quoted-string detectors.
BASE64_LIMIT = 4.5
HEX_LIMIT = 3.0
# Shorter runs cannot reach the base64 limit (log2 of the length bounds the entropy), and
# short hex runs are colours, ids and checksums fragments.
MIN_TOKEN = 20
TOKEN = re.compile(rf"[A-Za-z0-9+/_\-]{{{MIN_TOKEN},}}={{0,2}}")
HEX = re.compile(r"[0-9a-fA-F]+")
# The keyword detector (the slowest by far) can only match a line holding one of its words.
KEYWORD_LINE = re.compile("|".join(DENYLIST), re.IGNORECASE)
# File names decide which assignment forms the keyword detector accepts: quoted values in
# code, bare values in configuration files. A text is scanned under both.
FILENAMES = ("release.py", "release.yaml")
# The unspecified address (servers binding to every interface) is no one's address.
NOT_AN_ADDRESS = {"0.0.0.0"}  # noqa: S104  # compared with, never bound


@cache
def _detectors() -> tuple[tuple[BasePlugin, ...], BasePlugin]:
    """Every detect-secrets plugin with its default settings, the keyword one apart."""
    classes: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
    plugins = [cls() for cls in classes.values()]
    keyword = next(p for p in plugins if isinstance(p, KeywordDetector))
    return tuple(p for p in plugins if p is not keyword), keyword


def _high_entropy(text: str) -> bool:
    base64, hexa = Base64HighEntropyString(limit=BASE64_LIMIT), HexHighEntropyString(HEX_LIMIT)
    for match in TOKEN.finditer(text):
        token = match.group().rstrip("=")
        if HEX.fullmatch(token):
            if len(token) >= 32 and hexa.calculate_shannon_entropy(token) > HEX_LIMIT:
                return True
        elif base64.calculate_shannon_entropy(token) > BASE64_LIMIT:
            return True
    return False


def _found(plugin: BasePlugin, line: str, filename: str) -> bool:
    secrets = plugin.analyze_line(filename=filename, line=line, line_number=0)
    if not secrets or heuristic.is_indirect_reference(line):
        return False
    return any(
        not (
            secret.secret_value is None
            or secret.secret_value in NOT_AN_ADDRESS
            or heuristic.is_sequential_string(secret.secret_value)
            or heuristic.is_potential_uuid(secret.secret_value)
            or heuristic.is_likely_id_string(secret.secret_value, line, plugin)
            or heuristic.is_templated_secret(secret.secret_value)
            or heuristic.is_prefixed_with_dollar_sign(secret.secret_value)
            or heuristic.is_not_alphanumeric_string(secret.secret_value)
        )
        for secret in secrets
    )


def findings(text: str) -> set[str]:
    """The kinds of secret found in `text` (detect-secrets' names, or HIGH_ENTROPY)."""
    if not text:
        return set()
    found: set[str] = set()
    plugins, keyword = _detectors()
    for line in text.splitlines():
        if not line.strip():
            continue
        for plugin in plugins:
            if plugin.secret_type not in found and _found(plugin, line, FILENAMES[0]):
                found.add(plugin.secret_type)
        if (
            keyword.secret_type not in found
            and KEYWORD_LINE.search(line)
            and any(_found(keyword, line, name) for name in FILENAMES)
        ):
            found.add(keyword.secret_type)
    if _high_entropy(text):
        found.add(HIGH_ENTROPY)
    return found
