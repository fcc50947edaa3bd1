"""Routes of pair serving, at the paths the public extension uses."""

from django.urls import path

from . import views

extension = [
    path("create_pair", views.CreatePairView.as_view(), name="ext-create-pair"),
    path("create_edit_pair", views.CreateEditPairView.as_view(), name="ext-create-edit-pair"),
    path("list_models", views.ListModelsView.as_view(), name="ext-list-models"),
]
