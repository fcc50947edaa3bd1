"""WSGI entry point for gunicorn: `gunicorn arena_site.wsgi --preload`.

The natural-language detector's models are loaded here, once: with `--preload` gunicorn's
master loads them before forking and the workers share the pages, instead of each worker
loading its own copy on its first vote (and making that vote wait seconds).
Set ARENA_PRELOAD_LABELS=0 to skip it.
"""

import os
from wsgiref.types import WSGIApplication

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena_site.settings")
application: WSGIApplication = get_wsgi_application()

# Outermost: a chunked request body is read before anything sizes it (arena_site/chunked.py).
from arena_site.chunked import ChunkedBodies  # noqa: E402

application = ChunkedBodies(application)

if os.environ.get("ARENA_PRELOAD_LABELS", "1") != "0":
    from analysis.labels.natural_language import warm_up

    warm_up()
