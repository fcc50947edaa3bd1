"""Why a pair cannot be served; each becomes the API's error answer (status, code, message)."""

from __future__ import annotations

from core.errors import ApplicationError


class ServingError(ApplicationError):
    """A pair that cannot be served. ``status``/``code``/``message`` become the API error."""

    status = 503
    code = "pair_unavailable"


class PairUnavailable(ServingError):
    """Fewer than two models can be drawn (the base's status and code)."""


class ProviderFailed(ServingError):
    status = 502
    code = "provider_error"


class ProviderTimedOut(ServingError):
    status = 504
    code = "provider_timeout"
