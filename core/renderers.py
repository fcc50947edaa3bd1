"""The JSON renderer of every API route: DRF's, but a lone surrogate in the data cannot make a 500.

Error messages quote what the client sent (`"x\\ud800" is not a known model`), and a lone
surrogate has no UTF-8 encoding, so DRF's renderer (`ensure_ascii=False`) raised
UnicodeEncodeError while answering a 400. Such a body is rendered again with every
non-ASCII character escaped, which is valid JSON that names the surrogate as `\\ud800`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rest_framework.renderers import JSONRenderer


class SafeJSONRenderer(JSONRenderer):
    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            return json.dumps(
                data, cls=self.encoder_class, ensure_ascii=True, allow_nan=not self.strict
            ).encode("ascii")
