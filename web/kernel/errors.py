"""Error bodies: the hub's {error, detail} on 8080 and RFC 7807 problem+json on 8081."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

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
    extra = {k: v for k, v in (extra or {}).items() if v is not None}
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
