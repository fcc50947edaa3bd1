"""Votes bound to the pairs this server served, while it serves pairs.

A vote sent without an API key (the extension's outcome routes, the anonymous native API)
claims a pair id and two models. While pair serving is on, that claim is checked against
the completion logs the pair server wrote *before* it answered `/create_pair`: the two shown
completions of one serving of that pair id, by these two models (either order). A vote that
matches counts like any other; one that does not (a pair id never served here, or served
with other models) is still stored, but held out of the public board as *unverified*
(`Battle.hold`), and a moderator may release it. Refusing it instead would lose the vote of
an honest user whenever our own record is missing; holding it costs an attacker as much.
A pair id takes one vote (`Battle.pair_id` is unique): a second, different vote is a 409.

API-key clients, imports and simulations keep their own trust: they are never bound.

Pair serving is "on" by `VOTE_BINDING` (auto / on / off); under auto, the pair server
(`serving`, a layer above this one) registers the check `set_serving_check` calls, so this
module never imports it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings

from core.models import ApiClient

from .models import BattleSource, CompletionLog
from .votes import VoteIn

_serving_check: Callable[[], bool] = lambda: False  # noqa: E731  (no pair server installed)

_LOG = CompletionLog._meta.db_table
# True when one serving of the pair id showed these two models: each shown log names its
# partner (pair_completion_id), so the two sides come from the same draw even when a pair
# id was requested more than once. Parameters: pair id, model A, model B. Table and column
# names come from the model's _meta; values go as parameters (ruff S608 answered).
BOUND_SQL = (
    f'EXISTS (SELECT 1 FROM "{_LOG}" s JOIN "{_LOG}" t '  # noqa: S608
    'ON t."completion_id" = s."pair_completion_id" '
    'WHERE s."pair_id" = %s AND t."pair_id" = s."pair_id" '
    'AND s."served_by_us" AND t."served_by_us" '
    'AND s."pair_index" IS NOT NULL AND t."pair_index" IS NOT NULL '
    'AND s."model_id" = %s AND t."model_id" = %s)'
)


def set_serving_check(check: Callable[[], bool]) -> None:
    """Register what says whether this server serves pairs (called by the pair server)."""
    global _serving_check
    _serving_check = check


def binding_on() -> bool:
    mode = settings.VOTE_BINDING
    if mode == "auto":
        return _serving_check()
    return bool(mode == "on")


def applies(*, vote: VoteIn, client: ApiClient | None) -> bool:
    """Whether this vote must match a served pair to count."""
    if client is not None or vote.source not in (BattleSource.EXTENSION, BattleSource.API):
        return False
    return binding_on()


def is_bound(*, pair_id: str, model_a_id: int, model_b_id: int) -> bool:
    """The check of BOUND_SQL through the ORM (the embedded SQLite mode's path)."""
    shown = CompletionLog.objects.filter(
        pair_id=pair_id, served_by_us=True, pair_index__isnull=False
    )
    partners = shown.filter(model_id=model_b_id).values_list("completion_id", flat=True)
    return shown.filter(model_id=model_a_id, pair_completion_id__in=list(partners)).exists()
