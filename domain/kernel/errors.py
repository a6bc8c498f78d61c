"""Domain errors: each carries the HTTP-neutral status a caller should see and a stable code."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, detail: str, *, code: str | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        if code:
            self.code = code
        self.extra = extra


class BadRequest(DomainError):
    status = 400
    code = "bad_request"


class Unauthorized(DomainError):
    status = 401
    code = "unauthorized"


class PaymentRequired(DomainError):
    status = 402
    code = "insufficient_balance"


class Forbidden(DomainError):
    status = 403
    code = "forbidden"


class NotFound(DomainError):
    status = 404
    code = "not_found"


class Conflict(DomainError):
    status = 409
    code = "conflict"


class Gone(DomainError):
    status = 410
    code = "gone"


class UnsupportedMediaType(DomainError):
    status = 415
    code = "unsupported_media_type"


class Unprocessable(DomainError):
    status = 422
    code = "unprocessable"


class RateLimited(DomainError):
    status = 429
    code = "rate_limited"

    def __init__(self, detail: str, *, retry_after: int, **extra: Any) -> None:
        super().__init__(detail, **extra)
        self.retry_after = retry_after


class Unavailable(DomainError):
    """A service Concord depends on (the mail relay, Redis) failed just now: try again later."""

    status = 503
    code = "unavailable"

    def __init__(self, detail: str, *, retry_after: int, **extra: Any) -> None:
        super().__init__(detail, **extra)
        self.retry_after = retry_after
