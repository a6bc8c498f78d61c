"""Declarative routes: one decorator validates the request with pydantic models and records the
operation, so the OpenAPI document is generated from the very models that validate requests."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from domain.kernel.errors import BadRequest

Handler = Callable[..., Awaitable[web.StreamResponse]]
# Checks the credential of an operation's security scheme; raises (401) before the input is parsed.
Authenticator = Callable[[web.Request, str], Awaitable[None]]


def validation_message(exc: ValidationError, where: str) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or where
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def first_field(exc: ValidationError) -> str | None:
    errs = exc.errors()
    return ".".join(str(p) for p in errs[0]["loc"]) if errs and errs[0]["loc"] else None


def nul_field(data: Any, path: str = "") -> str | None:
    """The first field holding a NUL character: no database stores one, so no input may carry it."""
    if isinstance(data, str):
        return path or "value" if "\x00" in data else None
    if isinstance(data, dict):
        items: Any = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    else:
        return None
    for key, value in items:
        found = nul_field(value, f"{path}.{key}" if path else str(key))
        if found:
            return found
    return None


def parse_model(model: type[BaseModel], data: Any, where: str) -> BaseModel:
    bad = nul_field(data)
    if bad:
        raise BadRequest(f"{bad}: NUL characters are not allowed", code="validation_error", field=bad)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise BadRequest(
            validation_message(exc, where), code="validation_error", field=first_field(exc)
        ) from None


async def read_json(request: web.Request, *, optional: bool = False) -> Any:
    if not request.body_exists:
        if optional:
            return {}
        raise BadRequest("request body must be a JSON object", code="invalid_json")
    raw = await request.read()
    if not raw.strip():
        if optional:
            return {}
        raise BadRequest("request body must be a JSON object", code="invalid_json")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}", code="invalid_json") from None
    except RecursionError:
        raise BadRequest("request body is nested too deeply", code="invalid_json") from None
    if not isinstance(data, dict):
        raise BadRequest("request body must be a JSON object", code="invalid_json")
    return data


@dataclass
class Operation:
    method: str
    path: str
    endpoint: Handler
    summary: str
    tags: list[str]
    body: type[BaseModel] | None
    body_optional: bool
    query: type[BaseModel] | None
    response: type[BaseModel] | None
    status: int
    auth: str | None
    errors: dict[int, str]
    content_type: str = "application/json"
    aliases: list[str] = field(default_factory=list)
    # A body the handler reads itself (after authenticating), described in OpenAPI only.
    documented_body: type[BaseModel] | None = None


class Routes:
    """The operations of one route module. Declaring one registers nothing: an app's Api includes the
    tables its app lists (web/hub/api.py, web/docs/api.py), so wiring is never an import side effect."""

    def __init__(self) -> None:
        self.operations: list[Operation] = []

    def route(
        self,
        method: str,
        path: str,
        *,
        summary: str,
        tags: list[str],
        body: type[BaseModel] | None = None,
        body_optional: bool = False,
        query: type[BaseModel] | None = None,
        response: type[BaseModel] | None = None,
        status: int = 200,
        auth: str | None = None,
        errors: dict[int, str] | None = None,
        aliases: list[str] | None = None,
        documented_body: type[BaseModel] | None = None,
    ) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            self.operations.append(
                Operation(
                    method.upper(),
                    path,
                    fn,
                    summary,
                    tags,
                    body,
                    body_optional,
                    query,
                    response,
                    status,
                    auth,
                    errors or {},
                    aliases=aliases or [],
                    documented_body=documented_body,
                )
            )
            return fn

        return register


class Api:
    """The operations of one app, and the OpenAPI 3.1 document describing them."""

    def __init__(
        self,
        title: str,
        version: str,
        description: str,
        error_model: type[BaseModel],
        *,
        tables: Sequence[Routes],
        security_schemes: dict[str, dict[str, Any]] | None = None,
        authenticator: Authenticator | None = None,
    ) -> None:
        self.title = title
        self.version = version
        self.description = description
        self.error_model = error_model
        self.security_schemes = security_schemes or {}
        self.authenticator = authenticator
        self.operations: list[Operation] = [op for table in tables for op in table.operations]
        seen: set[tuple[str, str]] = set()
        for op in self.operations:
            for path in (op.path, *op.aliases):
                if (op.method, path) in seen:
                    raise ValueError(f"{op.method} {path} is declared twice")
                seen.add((op.method, path))

    def handler(self, op: Operation) -> Handler:
        """The aiohttp handler of an operation: authenticate (401 before any 400), then parse its input."""
        authenticator = self.authenticator

        async def handle(request: web.Request) -> web.StreamResponse:
            kwargs: dict[str, Any] = {}
            if op.auth is not None and authenticator is not None:
                await authenticator(request, op.auth)
            if op.query is not None:
                kwargs["query"] = parse_model(op.query, dict(request.query), "query")
            if op.body is not None:
                kwargs["body"] = parse_model(
                    op.body, await read_json(request, optional=op.body_optional), "body"
                )
            return await op.endpoint(request, **kwargs)

        return handle

    def add_routes(self, app: web.Application) -> None:
        # aiohttp matches in registration order: literal segments must win over placeholders
        # (/api/pact/wallet before /api/pact/{topicId}), whatever order the modules were imported in.
        routes = [
            (op.method, path, self.handler(op)) for op in self.operations for path in [op.path, *op.aliases]
        ]
        for method, path, handler in sorted(routes, key=lambda r: _specificity(r[1])):
            app.router.add_route(method, path, handler)

    def openapi(self) -> dict[str, Any]:
        models: set[type[BaseModel]] = {self.error_model}
        for op in self.operations:
            for m in (op.body, op.documented_body, op.response):
                if m is not None:
                    models.add(m)
        keyed = [(m, "validation") for m in sorted(models, key=lambda m: m.__name__)]
        refs, defs = models_json_schema(keyed, ref_template="#/components/schemas/{model}")
        schemas = defs.get("$defs", {})

        def ref(model: type[BaseModel]) -> dict[str, Any]:
            return refs[(model, "validation")]

        paths: dict[str, dict[str, Any]] = {}
        for op in self.operations:
            params = [
                {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
                for name in _path_params(op.path)
            ]
            if op.query is not None:
                qschema = op.query.model_json_schema()
                required = set(qschema.get("required", []))
                for name, prop in qschema.get("properties", {}).items():
                    params.append(
                        {
                            "name": name,
                            "in": "query",
                            "required": name in required,
                            "description": prop.get("description", ""),
                            "schema": {k: v for k, v in prop.items() if k not in ("description", "title")},
                        }
                    )
            success: dict[str, Any] = {"description": op.summary}
            if op.response is not None:
                success["content"] = {op.content_type: {"schema": ref(op.response)}}
            else:
                success["content"] = {"application/json": {"schema": {"type": "object"}}}
            responses: dict[str, Any] = {str(op.status): success}
            for code, text in sorted({400: "Bad input; the detail names the field", **op.errors}.items()):
                responses[str(code)] = {
                    "description": text,
                    "content": {"application/json": {"schema": ref(self.error_model)}},
                }
            entry: dict[str, Any] = {
                "summary": op.summary,
                "tags": op.tags,
                "operationId": f"{op.method.lower()}_{_op_id(op.path)}",
                "parameters": params,
                "responses": responses,
            }
            body = op.body or op.documented_body
            if body is not None:
                entry["requestBody"] = {
                    "required": not op.body_optional,
                    "content": {"application/json": {"schema": ref(body)}},
                }
            if op.auth:
                entry["security"] = [{op.auth: []}]
            paths.setdefault(op.path, {})[op.method.lower()] = entry
        return {
            "openapi": "3.1.0",
            "info": {"title": self.title, "version": self.version, "description": self.description},
            "paths": paths,
            "components": {"schemas": schemas, "securitySchemes": self.security_schemes},
        }


def _specificity(path: str) -> tuple[int, ...]:
    """Sort key: at each segment a literal comes before a placeholder."""
    return tuple(1 if seg.startswith("{") else 0 for seg in path.strip("/").split("/"))


def _path_params(path: str) -> list[str]:
    return re.findall(r"{(\w+)(?::[^}]*)?}", path)


def _op_id(path: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]+", "_", path).strip("_")


def json_response(data: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        body=json.dumps(data, separators=(",", ":"), default=str).encode(),
        status=status,
        content_type="application/json",
        headers=headers,
    )
