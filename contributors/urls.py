"""Routes of contributors: the extension's account and scores routes, and the pages."""

from django.urls import path

from . import views

extension = [
    path("users", views.UsersView.as_view(), name="ext-users"),
    path("users/authenticate", views.AuthenticateView.as_view(), name="ext-users-authenticate"),
    path("user_scores", views.UserScoresView.as_view(), name="ext-user-scores"),
]

pages = [
    path("take-part/", views.take_part, name="take-part"),
    path("contributors/", views.top_contributors, name="contributors"),
    path("contributors/<str:username>/", views.personal_by_username, name="contributor"),
    path("me/<str:token>/", views.personal_by_token, name="contributor-private"),
]
