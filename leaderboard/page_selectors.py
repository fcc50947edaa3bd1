"""Reads behind the public pages and the read API: which board a page shows and its rows, a
model page's parts, the compare page's result, the API's overall rows with ignored pairs. The
views only add charts and render."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from catalogue.models import ArenaModel

from . import compare, compare_slices, selectors
from .aggregation import DIMENSIONS
from .board_filters import apply_filters
from .controlled import VIEWS, controlled_rows
from .ignored_board import IgnoredBoard, ignored_board, ignored_rows
from .ignored_pairs import ignored_summary
from .merges import merged_names
from .new_models import mark_new, new_models
from .provisional import min_votes, provisional_models
from .slice_labels import category_label, value_order


def category_choices() -> list[selectors.Category]:
    """The published snapshot's categories as the selector lists them."""
    dims = list(DIMENSIONS)
    out: list[selectors.Category] = [
        {**c, "label": category_label(c["dimension"], c["value"])} for c in selectors.categories()
    ]
    # Overall first, then each dimension in its own order (context buckets by size).
    return sorted(
        out,
        key=lambda c: (
            (-1, (0, ""))
            if c["key"] == "overall"
            else (
                dims.index(c["dimension"]) if c["dimension"] in dims else len(dims),
                value_order(c["dimension"], c["value"]),
            )
        ),
    )


@dataclass(frozen=True)
class BoardChoice:
    """The board a page shows for the category and view asked for, and why it differs."""

    data: selectors.Board | None
    category: str
    view: str
    notice: str | None
    variant: IgnoredBoard | None  # the ignored-pairs variant under view=ignored


def _view_refused(view: str, category: str, data: selectors.Board | None) -> str | None:
    """Why the view asked for cannot be shown (the plain board is then), or None."""
    if view not in VIEWS:
        return f"There is no view “{view[:40]}” (view= takes plain, controlled or ignored): showing the plain board."
    if view == "controlled" and data is not None and category != "overall":
        return "The controlled view exists for the overall board only: showing this category's plain board."
    if view == "controlled" and data is not None and not data["category"].get("controlled"):
        return "This board was computed without a controlled fit: showing the plain board."
    if view == "ignored" and data is not None and category != "overall":
        return "The ignored-pairs view exists for the overall board only: showing this category's plain board."
    return None


def choose_board(*, category: str, view: str) -> BoardChoice:
    data = selectors.board(category=category)
    notice = None
    if data is None and category != "overall":
        # A stale or mistyped link: the overall board, saying so (the API still answers 404).
        notice = (
            f"There is no board for the category “{category[:100]}”: showing the overall board."
        )
        category = "overall"
        data = selectors.board(category=category)
    why = _view_refused(view, category, data)
    variant = ignored_board() if view == "ignored" and why is None and data is not None else None
    if view == "ignored" and why is None and data is not None and variant is None:
        why = "This board has no counts to add ignored pairs to: showing the plain board."
    if why is not None:
        notice, view = f"{notice} {why}" if notice else why, "plain"
    return BoardChoice(data, category, view, notice, variant)


@dataclass(frozen=True)
class BoardRows:
    shown: Sequence[Mapping[str, object]]  # the view's rows, before the filters
    board: dict[str, object]  # the board as the table renders it: filtered, new ones marked
    filters: dict[str, object]  # what the filter form shows


def board_rows(
    *, data: selectors.Board, choice: BoardChoice, params: Mapping[str, str]
) -> BoardRows:
    """The rows of the chosen view, filtered and sorted by `params`; on the overall board
    also the models still waiting for enough votes."""
    shown: Sequence[Mapping[str, object]] = data["models"]
    if choice.view == "controlled":
        shown = controlled_rows(data["models"])
    elif choice.view == "ignored" and choice.variant is not None:
        shown = ignored_rows(data["models"], choice.variant)
    rows, filters = apply_filters(rows=shown, params=params)
    board: dict[str, object] = {**data, "models": mark_new(rows, new=new_models())}
    if choice.category == "overall":
        ranked = {m["model"] for m in data["models"]}
        board["provisional"] = provisional_models(ranked=ranked)
        board["min_votes"] = min_votes()
    return BoardRows(shown, board, filters)


@dataclass(frozen=True)
class ModelPage:
    model: ArenaModel
    board: selectors.Board | None
    row: selectors.BoardRow | None
    history: list[dict[str, object]]
    slices: list[selectors.ModelSlice]
    opponents: list[dict[str, object]]

    def context(self) -> dict[str, object]:
        """The template's context, charts aside."""
        ignored = ignored_summary()
        return {
            "model": self.model,
            "merged_names": merged_names(model_id=self.model.pk),
            "first_rated": new_models().get(self.model.key),  # set only while it is new
            "ignored": ignored.model(self.model.key) if ignored else None,
            "row": self.row,
            "board": self.board,
            "history": self.history,
            "slices": self.slices,
            "opponents": self.opponents,
        }


def model_page(*, model: ArenaModel) -> ModelPage:
    """A public model's page: its line on the board, history, slices, opponents."""
    key = model.key
    data = selectors.board()
    row = next((m for m in data["models"] if m["model"] == key), None) if data else None
    dims = list(DIMENSIONS)
    # As the category selector lists them: by dimension, context buckets by size.
    slices = sorted(
        selectors.model_slices(model_id=model.pk),
        key=lambda s: (
            dims.index(s["dimension"]) if s["dimension"] in dims else len(dims),
            value_order(s["dimension"], s["value"]),
        ),
    )
    return ModelPage(
        model=model,
        board=data,
        row=row,
        history=selectors.model_history(model_id=model.pk),
        slices=slices,
        opponents=selectors.model_opponents(board_data=data, key=key) if data else [],
    )


def compare_page(*, a: str, b: str) -> tuple[dict[str, object], int]:
    """The compare page's context for models `a` and `b` (either may be empty), and its
    status: 404 for a model not on the board, 400 for the same model twice."""
    data = selectors.board()
    context: dict[str, object] = {"board": data, "a": a, "b": b, "result": None, "error": None}
    status = 200
    keys = {m["model"] for m in data["models"]} if data else set()
    if a and b:
        unknown = [k for k in (a, b) if k not in keys]
        if unknown:
            context["error"] = f"Not on the current board: {', '.join(unknown)}."
            status = 404
        elif a == b:
            context["error"] = "Choose two different models to compare."
            status = 400
        else:
            context["result"] = compare.head_to_head(a=a, b=b)
            context["slices"] = compare_slices.per_slice(a=a, b=b)
    return context, status


def api_board_rows(
    *, data: selectors.Board, snapshot_id: int, view: str
) -> tuple[Mapping[str, object], list[dict[str, object]]] | None:
    """The overall board's snapshot and rows with each model's ignored pairs; under
    `view=ignored` the rating, interval and rank of the variant that counts them as both bad
    (plain kept)."""
    summary = ignored_summary(snapshot_id=snapshot_id)
    models: list[dict[str, object]] = [
        {**r, "ignored_pairs": summary.model(r["model"]) if summary is not None else None}
        for r in data["models"]
    ]
    snapshot: Mapping[str, object] = data["snapshot"]
    if view == "ignored":
        variant = ignored_board(snapshot_id=snapshot_id)
        if variant is None:
            return None
        models = ignored_rows(models, variant)
        snapshot = {
            **snapshot,
            "view": "ignored",
            "view_label": (
                f"ignored pairs counted as both bad ({variant.ignored:,} pairs shown and not "
                f"voted on within {variant.window_minutes} minutes, added as ties; closed-form "
                "intervals for independent votes)"
            ),
        }
    return snapshot, models
