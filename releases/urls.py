"""Route of the public download page."""

from django.urls import path

from . import views

pages = [
    path("data/", views.data_page, name="data"),
]
