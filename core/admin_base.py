"""Base classes for admin pages: records nobody edits by hand (logs, snapshots), and change
pages whose template is given more context; the admin's extra pages (``admin_route``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path

_M = TypeVar("_M", bound=Model)


class ReadOnlyAdmin(admin.ModelAdmin[Any]):
    """Listed and viewed only: rows are written by the application, never in the admin."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class ChangeContextAdmin(admin.ModelAdmin[_M]):
    """A change page whose template also gets ``change_context``; it wins over a caller's
    ``extra_context`` where both name the same key."""

    def change_context(self, request: HttpRequest, object_id: str) -> dict[str, Any]:
        return {}

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        extra = self.change_context(request, object_id)
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **extra})


def admin_route(
    model_admin: admin.ModelAdmin[Any], route: str, view: Callable[..., HttpResponse], name: str
) -> URLPattern:
    """An extra page of ``model_admin`` at ``route``, behind the admin site's login check."""
    return path(route, model_admin.admin_site.admin_view(view), name=name)
