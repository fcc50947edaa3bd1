"""Ingest routes: the native v1 API and the public extension's own paths."""

from django.urls import path

from . import extension_views, views

api_v1 = [
    path("battles", views.BattleView.as_view(), name="api-battles"),
    path("battles/batch", views.BattleBatchView.as_view(), name="api-battles-batch"),
]

extension = [
    path(
        "add_completion_outcome",
        extension_views.CompletionOutcomeView.as_view(),
        name="ext-completion-outcome",
    ),
    path("add_edit_outcome", extension_views.EditOutcomeView.as_view(), name="ext-edit-outcome"),
    path(
        "add_single_outcome", extension_views.SingleOutcomeView.as_view(), name="ext-single-outcome"
    ),
    path("add_completion", extension_views.AddCompletionView.as_view(), name="ext-add-completion"),
    path(
        "user_vote_count", extension_views.UserVoteCountView.as_view(), name="ext-user-vote-count"
    ),
]
