"""A stored battle as a release row: re-keyed ids, labels in LMArena's and our columns, and
its client-written text through the secret scan.

Keys: every release draws a fresh random key (kept nowhere), so its pseudonyms and battle
ids join nothing outside it: not the live server's `user_hash` and `pair_id`, not another
release. With stable ids the key is derived from USER_ID_HMAC_KEY: the same across such
releases, still never equal to a live value. A battle without a user keeps no user (null).
"""

from __future__ import annotations

import hmac
import secrets
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from ingest.models import CODE_FIELDS, Outcome, Privacy

from . import secret_scan
from .columns import MEASURES

WINNER = {
    Outcome.A: "model_a",
    Outcome.B: "model_b",
    Outcome.TIE: "tie",
    Outcome.BOTH_BAD: "both_bad",
}
# Short client-written fields, scanned once per distinct value (they repeat across battles).
CLIENT_FIELDS = ("file_type", "client_version")
STABLE_KEY_LABEL = b"arena dataset releases: stable ids"


def release_key(*, stable: bool) -> bytes:
    if stable:
        return hmac.digest(settings.USER_ID_HMAC_KEY.encode(), STABLE_KEY_LABEL, "sha256")
    return secrets.token_bytes(32)


@dataclass
class RowMaker:
    """Turns stored battles into release rows, counting what the scan did."""

    key: bytes
    model_keys: dict[int, str]
    drop_flagged: bool
    research_rows: int = 0
    with_code: int = 0
    flagged_rows: int = 0
    flagged_kinds: Counter[str] = field(default_factory=Counter)
    _users: dict[str, str] = field(default_factory=dict)
    _client_scan: dict[str, bool] = field(default_factory=dict)

    def pseudonym(self, user_hash: str) -> str | None:
        if not user_hash:
            return None
        if user_hash not in self._users:
            self._users[user_hash] = hmac.digest(
                self.key, b"user:" + user_hash.encode(), "sha256"
            ).hex()
        return self._users[user_hash]

    def _client_text_flagged(self, value: str) -> bool:
        if value not in self._client_scan:
            self._client_scan[value] = bool(secret_scan.findings(value))
        return self._client_scan[value]

    def row(self, b: dict[str, Any]) -> dict[str, Any] | None:
        """The release row of stored battle `b` (selectors.battle_rows), or None when it is
        left out (its secret-flagged code under the drop rule)."""
        code = {f: b[f] for f in CODE_FIELDS} if b["privacy"] == Privacy.RESEARCH else {}
        kinds: set[str] = set()
        for text in code.values():
            kinds |= secret_scan.findings(text or "")
        client = {f: b[f] for f in CLIENT_FIELDS}
        if any(self._client_text_flagged(v) for v in client.values() if v):
            kinds.add("client field")
            client = dict.fromkeys(CLIENT_FIELDS, "")
        if code:
            self.research_rows += 1
        if kinds:
            self.flagged_rows += 1
            self.flagged_kinds.update(kinds)
            if self.drop_flagged:
                return None
            code = {}
        if code:
            self.with_code += 1
        tags = {
            "task_type": b["task_type"],
            "programming_language": b["language"],
            "context_bucket": b["context_bucket"],
        }
        return {
            "id": hmac.digest(self.key, b"battle:" + b["pair_id"].encode(), "sha256").hex()[:32],
            "model_a": self.model_keys[b["model_a_id"]],
            "model_b": self.model_keys[b["model_b_id"]],
            "winner": WINNER[b["outcome"]],
            "tstamp": float(int(b["received_at"].timestamp())),
            "language": b["natural_language"],
            "category_tag": tags,
            "is_code": True,
            "user_hash": self.pseudonym(b["user_hash"]),
            "kind": b["kind"],
            **tags,
            "file_type": client["file_type"],
            "privacy": b["privacy"],
            "source": b["source"],
            **{k: b[k] for k in MEASURES},
            "client_version": client["client_version"],
            "excluded": b["excluded"],
            "code_redacted": bool(kinds),
            **{f: code.get(f) for f in CODE_FIELDS},
        }
