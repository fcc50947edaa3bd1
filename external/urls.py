"""Public pages and the read API of external leaderboards and correlations."""

from django.urls import path

from . import api, views

pages = [
    path("correlations/", views.correlations, name="correlations"),
    path("external/", views.external_scores, name="external-scores"),
]

api_v1 = [
    path("correlations", api.CorrelationsAPI.as_view(), name="api-correlations"),
]
