"""Admin changes that alter what the board counts, announced so that a recompute follows.

The catalogue and moderation admins call `announce(what=...)` when a change they make alters
what the board counts (a model hidden, retired or made public, battles excluded or
restored, a merge or an alias). The leaderboard, a layer above, listens: it schedules a
debounced recompute once the change commits and answers with the sentence the admin's
message adds, so the moderator learns when the board follows (leaderboard/board_changes.py).
"""

from __future__ import annotations

from django.contrib import messages
from django.dispatch import Signal
from django.http import HttpRequest
from django.utils.html import format_html
from django_stubs_ext import StrOrPromise

# kwargs: what (str, for the log). Receivers return a sentence for the staff member, or "".
board_inputs_changed = Signal()


def announce(*, what: str) -> str:
    """Tell the listeners; returns what they say will happen ("" when nobody listens)."""
    replies = board_inputs_changed.send(sender=None, what=what)
    return " ".join(r for _, r in replies if isinstance(r, str) and r)


class BoardNoteAdmin:
    """Admin mixin: `board_changed(request, what=...)` announces a change, and the next
    success message of the request ends with what happens to the board."""

    def board_changed(self, request: HttpRequest, *, what: str, news: str = "") -> None:
        """Announce `what`; the message adds `news` (a sentence, display names) and when
        the board follows."""
        sentence = announce(what=what)
        notes: list[str] = getattr(request, "_board_notes", [])
        if sentence or news:
            notes.append(f"{news}. {sentence}" if news and sentence else news or sentence)
        request._board_notes = notes  # type: ignore[attr-defined]

    def message_user(
        self,
        request: HttpRequest,
        message: StrOrPromise,
        level: int | str = messages.INFO,
        extra_tags: str = "",
        fail_silently: bool = False,
    ) -> None:
        notes: list[str] = getattr(request, "_board_notes", [])
        if notes and level == messages.SUCCESS:
            # One sentence per request, however many rows announced a change.
            message = format_html("{} {}", message, notes[-1])
            request._board_notes = []  # type: ignore[attr-defined]
        super().message_user(  # type: ignore[misc]
            request, message, level, extra_tags=extra_tags, fail_silently=fail_silently
        )
