"""Public pages and the read API of the leaderboard."""

from django.urls import path

from . import api, views

pages = [
    path("", views.leaderboard, name="leaderboard"),
    path("models/<path:key>/", views.model_detail, name="model-detail"),
    path("methodology/", views.methodology, name="methodology"),
    path("slices/", views.slices, name="slices"),
    path("compare/", views.compare_models, name="compare"),
]

api_v1 = [
    path("leaderboard", api.LeaderboardAPI.as_view(), name="api-leaderboard"),
    path("categories", api.CategoriesAPI.as_view(), name="api-categories"),
    path("slices", api.SlicesAPI.as_view(), name="api-slices"),
]
