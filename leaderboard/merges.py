"""Model pages and merged keys: a key merged into another model sends its readers to that
model's page (permanently), and that page names the keys merged into it."""

from __future__ import annotations

from catalogue.models import ArenaModel, Visibility

_SHOWN = (Visibility.PUBLIC, Visibility.RETIRED)
_MAX_HOPS = 10  # merges may chain (a into b, b into c); a loop is a data error, not a page


def merge_target(key: str) -> str | None:
    """The key of the public (or retired) model that `key` was merged into, if any."""
    model = ArenaModel.objects.filter(key=key).select_related("merged_into").first()
    hops = 0
    while model is not None and model.merged_into_id is not None and hops < _MAX_HOPS:
        model = ArenaModel.objects.filter(pk=model.merged_into_id).first()
        hops += 1
    if model is None or hops == 0 or model.visibility not in _SHOWN:
        return None
    return model.key


def merged_names(*, model_id: int) -> list[str]:
    """Display names (key when it differs) of the models merged into this one."""
    rows = ArenaModel.objects.filter(merged_into_id=model_id).order_by("display_name", "key")
    return [
        m.display_name if m.display_name == m.key else f"{m.display_name} ({m.key})" for m in rows
    ]
