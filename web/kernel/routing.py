"""Declarative routes: one decorator validates the request with pydantic models and records the
operation, so the OpenAPI document is generated from the very models that validate requests."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from aiohttp import hdrs, web
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from domain.kernel.errors import BadRequest, UnsupportedMediaType
from web.kernel.access import ACCESS, ANONYMOUS, CREDITS_REMAINING, Access, Anonymous, Commercial, Guard
from web.kernel.replies import ANSWER_MISMATCH, SHAPE, Reply, ResponseMismatch, Shape
from web.kernel.request import runtime

Handler = Callable[..., Awaitable[web.StreamResponse]]
# An operation's endpoint: a Response of its own, or a value (a Reply for another status or headers) that
# the operation serialises through its response model (web/kernel/replies.py).
Endpoint = Callable[..., Awaitable[Any]]


def validation_message(exc: ValidationError, where: str) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or where
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def first_field(exc: ValidationError) -> str | None:
    errs = exc.errors()
    return ".".join(str(p) for p in errs[0]["loc"]) if errs and errs[0]["loc"] else None


def error_code(exc: ValidationError) -> str:
    """The code of the first error: a rule's own (web/kernel/wire.py Rule.code), else validation_error."""
    errs = exc.errors()
    code = errs[0].get("ctx", {}).get("code") if errs else None
    return code if isinstance(code, str) else "validation_error"


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
    """A query (strings, converted as the model's types say) or other Python data, validated by the model."""
    bad = nul_field(data)
    if bad:
        raise BadRequest(f"{bad}: NUL characters are not allowed", code="validation_error", field=bad)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        message = validation_message(exc, where)
        raise BadRequest(message, code=error_code(exc), field=first_field(exc)) from None


def _integral(data: Any) -> tuple[Any, bool]:
    """The data with every float that has no fractional part as an int, and whether any changed: JSON
    Schema counts 9.0 as an integer, so an integer field takes it (and never 9.5, "9" or true)."""
    if isinstance(data, float):
        if data.is_integer():
            return int(data), True
        return data, False
    if isinstance(data, dict):
        changed = False
        out: dict[str, Any] = {}
        for key, value in data.items():
            out[key], moved = _integral(value)
            changed = changed or moved
        return (out, True) if changed else (data, False)
    if isinstance(data, list):
        items = [_integral(value) for value in data]
        if any(moved for _, moved in items):
            return [value for value, _ in items], True
        return data, False
    return data, False


def parse_body(model: type[BaseModel], data: Any) -> BaseModel:
    """A JSON body, validated as strictly as its JSON Schema reads: no value is coerced from another JSON
    type (0 is not a boolean nor a date, "9" is not an integer, 1 is not a string), so what the OpenAPI
    document accepts is exactly what the operation accepts."""
    bad = nul_field(data)
    if bad:
        raise BadRequest(f"{bad}: NUL characters are not allowed", code="validation_error", field=bad)
    data, _ = _integral(data)
    try:
        # JSON mode: a date or a UUID is a string on the wire, which strict Python mode would refuse.
        return model.model_validate_json(json.dumps(data), strict=True)
    except ValidationError as exc:
        message = validation_message(exc, "body")
        raise BadRequest(message, code=error_code(exc), field=first_field(exc)) from None


JSON_MEDIA = "application/json"


def is_json_media(content_type: str) -> bool:
    """`application/json` or a structured `+json` type (RFC 6839), parameters aside."""
    main, _, sub = content_type.strip().lower().partition("/")
    return main == "application" and (sub == "json" or sub.endswith("+json"))


def require_json_media(request: web.Request) -> None:
    """A body is read as JSON only when it is sent as JSON: a page on another site can post text/plain or a
    form to any address without a preflight, never application/json (CSRF)."""
    sent = request.headers.get(hdrs.CONTENT_TYPE)
    if sent is None or not is_json_media(request.content_type):
        came = f"it came as {request.content_type}" if sent is not None else "it came without a Content-Type"
        raise UnsupportedMediaType(f"send the body as {JSON_MEDIA} (Content-Type: {JSON_MEDIA}); {came}")


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
    require_json_media(request)
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
    endpoint: Endpoint
    summary: str
    tags: list[str]
    body: type[BaseModel] | None
    body_optional: bool
    query: type[BaseModel] | None
    response: type[BaseModel] | None
    status: int
    access: Access
    errors: dict[int, str]
    content_type: str = "application/json"
    aliases: list[str] = field(default_factory=list)
    # A body the handler reads itself, described in OpenAPI only.
    documented_body: type[BaseModel] | None = None
    # Success statuses besides `status`, answered with the same body (202: still running), by description.
    also: dict[int, str] = field(default_factory=dict)
    # Representations of the success body besides `content_type`, chosen by the request (format=markdown).
    alternatives: list[str] = field(default_factory=list)
    # The media type of the request body (a form-encoded OAuth token request), and an error body of the
    # operation's own (OAuth's {error, error_description}, as JSON) instead of the app's.
    body_media: str = "application/json"
    error_model: type[BaseModel] | None = None
    # Statuses whose error body is the operation's own, as JSON (PACT's onboard-response rejection on 422).
    refusals: dict[int, type[BaseModel]] = field(default_factory=dict)

    @cached_property
    def shape(self) -> Shape | None:
        """The response model as a strict checker and serialiser, built once for the operation."""
        return (
            Shape(self.response, f"{self.method} {self.path}", self.status)
            if self.response is not None
            else None
        )

    @cached_property
    def refused(self) -> dict[int, Shape]:
        """The operation's own refusal bodies by status (PACT's onboard rejection), as answer shapes."""
        return {
            code: Shape(m, f"{self.method} {self.path} ({code})", code) for code, m in self.refusals.items()
        }

    @property
    def auth(self) -> str | None:
        """The OpenAPI security scheme of the operation's access; None when anonymous."""
        return self.access.scheme

    @property
    def metered(self) -> bool:
        return isinstance(self.access, Commercial) and self.access.metered


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
        access: Access = ANONYMOUS,
        errors: dict[int, str] | None = None,
        aliases: list[str] | None = None,
        documented_body: type[BaseModel] | None = None,
        content_type: str = "application/json",
        also: dict[int, str] | None = None,
        alternatives: list[str] | None = None,
        body_media: str = "application/json",
        error_model: type[BaseModel] | None = None,
        refusals: dict[int, type[BaseModel]] | None = None,
    ) -> Callable[[Endpoint], Endpoint]:
        def register(fn: Endpoint) -> Endpoint:
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
                    access,
                    errors or {},
                    content_type=content_type,
                    aliases=aliases or [],
                    documented_body=documented_body,
                    also=also or {},
                    alternatives=alternatives or [],
                    body_media=body_media,
                    error_model=error_model,
                    refusals=refusals or {},
                )
            )
            return fn

        return register


def query_parameters(request: web.Request) -> dict[str, str]:
    """The query string's parameters. Each is one value: a repeated one is refused, not read as its first."""
    params: dict[str, str] = {}
    for name, value in request.query.items():
        if name in params:
            raise BadRequest(f"{name}: give this query parameter once", code="validation_error", field=name)
        params[name] = value
    return params


class _Queries:
    """An operation's parsed queries by query string, when its model is frozen: no handler can change a shared
    instance, and a hot read asks with the same query string again and again. At most `KEPT` are kept
    (oldest first out); a query that fails validation is never kept."""

    KEPT = 256

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model
        self.parsed: dict[str, BaseModel] = {}

    def get(self, request: web.Request) -> BaseModel:
        found = self.parsed.get(request.query_string)
        if found is None:
            found = parse_query(self.model, request)
            if len(self.parsed) >= self.KEPT:
                del self.parsed[next(iter(self.parsed))]
            self.parsed[request.query_string] = found
        return found


def parse_query(model: type[BaseModel], request: web.Request) -> BaseModel:
    return parse_model(model, query_parameters(request) if request.query_string else {}, "query")


# Api.document's documents (and their JSON text) by what they are built from: the operations, kept
# alive with them so that their ids in the key stay theirs.
_DOCUMENTS: dict[tuple[Any, ...], tuple[tuple[Operation, ...], dict[str, Any], str]] = {}


# Api.handler's handlers by (operation, guard), kept alive with them so that their ids in the key stay theirs.
_HANDLERS: dict[tuple[int, int], tuple[Operation, Guard | None, Handler]] = {}


def _handler(op: Operation, guard: Guard | None) -> Handler:
    metered = op.metered
    queries = _Queries(op.query) if op.query is not None and op.query.model_config.get("frozen") else None
    shape = op.shape  # built here, with the routes, not at the first request
    refused = op.refused

    async def run(request: web.Request) -> web.StreamResponse:
        request[ACCESS] = op.access
        kwargs: dict[str, Any] = {}
        if queries is not None:
            kwargs["query"] = queries.get(request)
        elif op.query is not None:
            kwargs["query"] = parse_query(op.query, request)
        if op.body is not None:
            kwargs["body"] = parse_body(op.body, await read_json(request, optional=op.body_optional))
        if shape is not None:
            request[SHAPE] = shape  # for a cached read's serialisation (web/kernel/request.py)
        try:
            response = _answer(op, shape, refused, await op.endpoint(request, **kwargs))
        except ResponseMismatch as exc:
            request[ANSWER_MISMATCH] = str(exc)  # for the suite's checker (tests/response_check.py)
            raise  # a programming error: logged with the operation, answered 500 (docs/decisions.md)
        if metered and response.status < 400 and CREDITS_REMAINING not in request:
            raise RuntimeError(f"{op.method} {op.path} is metered but answered without charging")
        return response

    if guard is None:
        return run  # anonymous: nothing to check first

    async def handle(request: web.Request) -> web.StreamResponse:
        request[ACCESS] = op.access
        # The guard may open the request's unit of work to look the key up in; the route's first
        # db.transaction() adopts it (web/kernel/request.py guard_session).
        async with runtime(request).db.request_unit():
            await guard(request, op.access)
            return await run(request)

    return handle


class Api:
    """The operations of one app, and the OpenAPI 3.1 document describing them."""

    def __init__(
        self,
        title: str,
        version: str,
        description: str,
        error_model: type[BaseModel],
        *,
        error_content_type: str = "application/json",
        tables: Sequence[Routes],
        security_schemes: dict[str, dict[str, Any]] | None = None,
        guards: Mapping[type[Access], Guard] | None = None,
    ) -> None:
        self.title = title
        self.version = version
        self.description = description
        self.error_model = error_model
        self.error_content_type = error_content_type
        self.security_schemes = security_schemes or {}
        self.guards = dict(guards or {})
        self.operations: list[Operation] = [op for table in tables for op in table.operations]
        seen: set[tuple[str, str]] = set()
        for op in self.operations:
            for path in (op.path, *op.aliases):
                if (op.method, path) in seen:
                    raise ValueError(f"{op.method} {path} is declared twice")
                seen.add((op.method, path))
            if isinstance(op.access, Anonymous):
                continue
            # An access this app cannot check would leave the operation open: refuse to build.
            if type(op.access) not in self.guards:
                raise ValueError(f"{op.method} {op.path} declares {op.access}, which this app cannot check")
            if op.access.scheme not in self.security_schemes:
                raise ValueError(f"{op.method} {op.path}: no security scheme {op.access.scheme}")

    def handler(self, op: Operation) -> Handler:
        """The aiohttp handler of an operation: its guard first (401/403 before any 400), then its input.
        Made once per process for each operation and guard, whichever Api asks: a handler holds nothing
        else, and every app built (each test's included) would otherwise make its few hundred afresh."""
        guard = self.guards.get(type(op.access))
        key = (id(op), id(guard))  # an entry keeps both alive, so no other object can take their ids
        if key not in _HANDLERS:
            _HANDLERS[key] = (op, guard, _handler(op, guard))
        return _HANDLERS[key][2]

    def add_routes(self, app: web.Application) -> None:
        # One aiohttp resource per path, holding all its methods (answer_every_method gives each resource
        # the methods it lacks), registered literal segments first (/api/pact/wallet before
        # /api/pact/{topicId}) whatever order the modules were imported in.
        by_path: dict[str, list[tuple[str, Handler]]] = {}
        pages = {
            p for op in self.operations if op.content_type == "text/html" for p in (op.path, *op.aliases)
        }
        for op in self.operations:
            for path in (op.path, *op.aliases):
                by_path.setdefault(path, []).append((op.method, self.handler(op)))
        for path in sorted(by_path, key=_specificity):
            resource = app.router.add_resource(path)
            for method, handler in by_path[path]:
                resource.add_route(method, handler)
                if method == "GET" and path in pages:
                    resource.add_route("HEAD", handler)  # link previews ask a page with HEAD

    @staticmethod
    def _reads_json(op: Operation) -> bool:
        return op.body is not None or (op.documented_body is not None and op.body_media == JSON_MEDIA)

    def document(self) -> dict[str, Any]:
        """The OpenAPI document, built once per process for each set of declarations (generating the JSON
        schemas of every model takes the better part of a second, and every app built, each test's
        included, serves it) and shared: read it, never change it (`openapi()` gives a copy to change)."""
        return self._known()[1]

    def openapi(self) -> dict[str, Any]:
        """A copy of the OpenAPI document, the caller's to change."""
        copy: dict[str, Any] = json.loads(self._known()[2])  # quicker than copy.deepcopy
        return copy

    def _known(self) -> tuple[tuple[Operation, ...], dict[str, Any], str]:
        key = (
            type(self),
            self.title,
            self.version,
            self.description,
            self.error_model,
            self.error_content_type,
            json.dumps(self.security_schemes, sort_keys=True),
            tuple(id(op) for op in self.operations),
        )
        if (known := _DOCUMENTS.get(key)) is None:
            document = self._document()
            known = _DOCUMENTS[key] = (tuple(self.operations), document, json.dumps(document))
        return known

    def _document(self) -> dict[str, Any]:
        """The OpenAPI 3.1 document built from the declarations (an app's Api adds what they cannot say)."""
        models: set[type[BaseModel]] = {self.error_model}
        for op in self.operations:
            for m in (op.body, op.documented_body, op.response, op.error_model, *op.refusals.values()):
                if m is not None:
                    models.add(m)
        mode: Literal["validation"] = "validation"
        keyed = [(m, mode) for m in sorted(models, key=lambda m: m.__name__)]
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
                # A vocabulary (a StrEnum) is a schema of its own, shared with the bodies that use it.
                qschema = op.query.model_json_schema(ref_template="#/components/schemas/{model}")
                for name, definition in qschema.pop("$defs", {}).items():
                    if schemas.setdefault(name, definition) != definition:
                        raise ValueError(f"two different schemas are named {name}")
                required = set(qschema.get("required", []))
                for name, prop in qschema.get("properties", {}).items():
                    # x-required: optional in the model so that the handler answers its own message, but
                    # required on the wire.
                    params.append(
                        {
                            "name": name,
                            "in": "query",
                            "required": name in required or bool(prop.pop("x-required", False)),
                            "description": prop.get("description", ""),
                            "schema": {k: v for k, v in prop.items() if k not in ("description", "title")},
                        }
                    )
            content: dict[str, Any]
            if op.response is not None:
                content = {op.content_type: {"schema": ref(op.response)}}
            elif op.content_type != "application/json":
                content = {op.content_type: {"schema": {"type": "string"}}}
            else:
                content = {"application/json": {"schema": {"type": "object"}}}
            for alternative in op.alternatives:
                content[alternative] = {"schema": {"type": "string"}}
            responses: dict[str, Any] = {str(op.status): {"description": op.summary, "content": content}}
            for code, text in sorted(op.also.items()):
                responses[str(code)] = {"description": text, "content": content}
            documented = {400: "Bad input; the detail names the field", **op.access.responses(), **op.errors}
            if self._reads_json(op) and 415 not in documented:
                documented[415] = f"The body is not sent as {JSON_MEDIA} (nor a +json type)"
            # A page's refusals are pages (the share-link review page); every other error is the app's error
            # body in its media type (problem+json on the document API).
            error_type = "text/html" if op.content_type == "text/html" else self.error_content_type
            error_model = op.error_model or self.error_model
            if op.error_model is not None:
                error_type = "application/json"
            for code, text in sorted(documented.items()):
                schema = {"type": "string"} if error_type == "text/html" else ref(error_model)
                media = error_type
                if code in op.refusals:
                    schema, media = ref(op.refusals[code]), "application/json"
                responses[str(code)] = {"description": text, "content": {media: {"schema": schema}}}
            entry: dict[str, Any] = {
                "summary": op.summary,
                "description": op.access.describe(),
                "tags": op.tags,
                "operationId": f"{op.method.lower()}_{_op_id(op.path)}",
                "parameters": params,
                "responses": responses,
            }
            body = op.body or op.documented_body
            if body is not None:
                entry["requestBody"] = {
                    "required": not op.body_optional,
                    "content": {op.body_media: {"schema": ref(body)}},
                }
            if op.access.scheme is not None:
                entry["security"] = [{op.access.scheme: op.access.requirement()}]
            entry["x-access"] = op.access.extension()
            paths.setdefault(op.path, {})[op.method.lower()] = entry
        return {
            "openapi": "3.1.0",
            "info": {"title": self.title, "version": self.version, "description": self.description},
            "paths": paths,
            "components": {"schemas": schemas, "securitySchemes": self.security_schemes},
        }


def _answer(op: Operation, shape: Shape | None, refused: dict[int, Shape], result: Any) -> web.StreamResponse:
    """The endpoint's result as the response: its own Response as it is, a value through the model (or,
    for a refusal status the operation declares a body of its own for, through that body's model)."""
    if isinstance(result, web.StreamResponse):
        return result
    reply = result if isinstance(result, Reply) else Reply(result)
    status = reply.status or op.status
    shape = refused.get(status, shape)
    if shape is None:
        raise ResponseMismatch(f"{op.method} {op.path} declares no response model: it must answer a Response")
    return shape.response(reply.value, status, reply.headers)


# The app's Api, for handlers that describe the app itself (registration lists its endpoints).
API = web.AppKey("api", Api)


def answer_every_method(app: web.Application) -> None:
    """Give every resource of the app a route for the methods it does not serve, answering 405 with its
    own Allow. Call it once all routes are added.

    Why: aiohttp tries a literal resource first (/api/axiom/legislation/ingest), but when that resource
    lacks the request's method it goes on to the placeholder resources that also match
    (/api/axiom/legislation/{docId}): GET on the literal path would reach the placeholder's handler, and
    OPTIONS or HEAD would get a 405 whose Allow mixes both resources' methods. With this, the resource
    that matches a path first answers every method, so a literal path always wins."""
    for resource in app.router.resources():
        if not isinstance(resource, web.Resource):
            continue
        methods = {route.method for route in resource}
        if hdrs.METH_ANY in methods:
            continue
        resource.add_route(hdrs.METH_ANY, _not_allowed(sorted(methods)))


def _not_allowed(allowed: list[str]) -> Handler:
    async def not_allowed(request: web.Request) -> web.StreamResponse:
        raise web.HTTPMethodNotAllowed(request.method, allowed)

    return not_allowed


def _specificity(path: str) -> tuple[int, ...]:
    """Sort key: at each segment a literal comes before a placeholder."""
    return tuple(1 if seg.startswith("{") else 0 for seg in path.strip("/").split("/"))


def _path_params(path: str) -> list[str]:
    return re.findall(r"{(\w+)(?::[^}]*)?}", path)


def _op_id(path: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]+", "_", path).strip("_")


def json_response(data: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """A JSON body no operation's model describes: error bodies, the OpenAPI document, the lab's dialect.
    An operation's answer is its handler's value instead, serialised through its model (Api.handler)."""
    return web.Response(
        body=json.dumps(data, separators=(",", ":"), default=str).encode(),
        status=status,
        content_type="application/json",
        headers=headers,
    )
