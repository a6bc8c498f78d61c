"""Error bodies: the hub's {error, detail} on 8080 and RFC 7807 problem+json on 8081."""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any, TypeVar

from aiohttp import web
from pydantic import BaseModel, ConfigDict

from web.kernel.routing import json_response


class HubError(BaseModel):
    model_config = ConfigDict(extra="allow", title="Error")
    error: str
    detail: str


class Problem(BaseModel):
    model_config = ConfigDict(extra="allow", title="Problem")
    type: str
    title: str
    status: int
    detail: str


_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "unprocessable",
    429: "rate_limited",
    500: "internal_error",
    503: "unavailable",
}


R = TypeVar("R")

# How an error field that a domain error holds as a record is written: by its web model, registered by the
# area that owns the record (web/hub/axiom/schemas.py: a citation as parsed, its candidates), so the domain
# writes no wire names for it. A list is written item by item; other values go out as they are.
_WRITERS: dict[type[Any], Callable[[Any], Any]] = {}


def writes(kind: type[R], write: Callable[[R], Any]) -> None:
    """Write the error fields of type `kind` with `write` (a web model's wire dict)."""
    _WRITERS[kind] = write


def _written(value: Any) -> Any:
    if isinstance(value, list):
        return [_written(v) for v in value]
    write = _WRITERS.get(type(value))
    return value if write is None else write(value)


def code_for(status: int) -> str:
    return _HTTP_CODES.get(status, HTTPStatus(status).phrase.lower().replace(" ", "_"))


def render(
    style: str,
    status: int,
    code: str,
    detail: str,
    *,
    extra: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    extra = {k: _written(v) for k, v in (extra or {}).items() if v is not None}
    if style == "problem":
        body = {
            "type": f"https://concord.local/problems/{code}",
            "title": HTTPStatus(status).phrase,
            "status": status,
            "detail": detail,
            "code": code,
        }
        # Extra fields never overwrite these members (a vote conflict carries the proposal's status).
        body.update({k: v for k, v in extra.items() if k not in body})
        resp = json_response(body, status=status, headers=headers)
        resp.content_type = "application/problem+json"
        return resp
    body = {"error": code, "detail": detail}
    body.update({k: v for k, v in extra.items() if k not in body})
    return json_response(body, status=status, headers=headers)
