"""URL map: admin, ingest (native API and extension routes), OpenAPI schema and docs, metrics,
the public pages (and, under DEBUG only, the release files: a deployment's web server serves
those)."""

from django.conf import settings
from django.conf.urls.static import static
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)

from arena_site.metrics import metrics_view
from contributors import urls as contributors_urls
from core.views import HealthView
from external import urls as external_urls
from ingest import urls as ingest_urls
from leaderboard import urls as leaderboard_urls
from releases import urls as releases_urls
from serving import urls as serving_urls

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", HealthView.as_view(), name="healthz"),
    path("metrics", metrics_view, name="metrics"),
    path("api/v1/", include(ingest_urls.api_v1)),
    path("api/v1/", include(leaderboard_urls.api_v1)),
    path("api/v1/", include(external_urls.api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves its script as a file: no inline script (Content-Security-Policy).
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
    path("", include(ingest_urls.extension)),
    path("", include(external_urls.pages)),
    path("", include(serving_urls.extension)),
    path("", include(contributors_urls.extension)),
    path("", include(contributors_urls.pages)),
    path("", include(releases_urls.pages)),
    path("", include(leaderboard_urls.pages)),
]

if settings.DEBUG and settings.ARENA_RELEASES_URL.startswith("/"):
    # The embedded demo has no web server in front; static() adds nothing outside DEBUG.
    urlpatterns += static(settings.ARENA_RELEASES_URL, document_root=settings.ARENA_RELEASES_ROOT)
