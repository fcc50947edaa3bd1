"""Request bodies sent with `Transfer-Encoding: chunked` (no Content-Length) are read.

Django sizes a request body by `CONTENT_LENGTH` alone, so a chunked body sent straight to
a gunicorn pool was read as empty (a vote answered 400 "pair_id: required"). nginx sends a
Content-Length upstream; a client talking to gunicorn directly need not. `ChunkedBodies`,
the outermost layer of the site's WSGI application (arena_site/wsgi.py), reads such a body
from gunicorn's de-chunking input into memory -- at most one byte more than the route's
limit (`core.middleware.body_limit`) -- and hands it on with its length, so the request
is served as if the length had been sent, and one over the limit gets the usual 413.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from django.conf import settings

from core.middleware import body_limit

READ_SIZE = 64 * 1024


class ChunkedBodies:
    def __init__(self, app: WSGIApplication) -> None:
        self.app = app

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if (
            not environ.get("CONTENT_LENGTH")
            and "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        ):
            limit = body_limit(environ.get("PATH_INFO", ""))
            if limit is None:
                limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            stream, body, size = environ["wsgi.input"], io.BytesIO(), 0
            while size <= limit:
                chunk = stream.read(min(READ_SIZE, limit + 1 - size))
                if not chunk:
                    break
                body.write(chunk)
                size += len(chunk)
            body.seek(0)
            environ["wsgi.input"] = body
            environ["CONTENT_LENGTH"] = str(size)
        return self.app(environ, start_response)
