"""The catalogue's model page, extended from above: an "Evaluate" button, results, the guard.

The catalogue must not know about evaluations (it sits lower in the layers), so this module
re-registers ``catalogue.admin.ArenaModelAdmin`` with a subclass: its change form template
extends the catalogue's own and adds the button (to the start form, the model filled in)
and the model's latest results; its form adds the public-visibility guard
(`selectors.public_check`): making a model public whose fill-in-the-middle check is below
``EVALUATION_MIN_WELL_FORMATTED`` shows a warning after saving, or is refused with
``EVALUATION_BLOCK_PUBLIC``.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.forms import ModelForm
from django.http import HttpRequest

from catalogue.admin import ArenaModelAdmin
from catalogue.models import ArenaModel
from core.audit import AuditedModelForm

from .selectors import latest_runs, public_check, recent_runs


class GuardedModelForm(AuditedModelForm):
    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "visibility" in data:
            check = public_check(self.instance, data.get("visibility"))
            if check is not None and check.block:
                self.add_error("visibility", f"{check.message} (EVALUATION_BLOCK_PUBLIC is on)")
        return data


class EvaluatedArenaModelAdmin(ArenaModelAdmin):
    form = GuardedModelForm
    change_form_template = "admin/evaluations/arenamodel_change_form.html"

    def save_model(
        self, request: HttpRequest, obj: ArenaModel, form: ModelForm[ArenaModel], change: bool
    ) -> None:
        check = public_check(obj, obj.visibility)
        super().save_model(request, obj, form, change)
        if check is not None:
            self.message_user(request, check.message, messages.WARNING)

    def change_context(self, request: HttpRequest, object_id: str) -> dict[str, Any]:
        model = ArenaModel.objects.filter(pk=object_id).first()
        return {
            **super().change_context(request, object_id),
            "evaluation_results": latest_runs(model) if model else [],
            "evaluation_recent": recent_runs(model) if model else [],
        }


if admin.site.is_registered(ArenaModel):
    admin.site.unregister(ArenaModel)
admin.site.register(ArenaModel, EvaluatedArenaModelAdmin)
