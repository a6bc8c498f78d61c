"""Every response the suite's apps give is checked against what the app declares (issue 10, item 5).

A test-only middleware, outermost on each app built from an `Api`, looks up the operation that answered
(by the aiohttp resource that matched the request) and validates the body against the app's own
/openapi.json: a 2xx JSON body against the operation's declared response model, an error body against
the app's error model (HubError / Problem). The schemas are made strict for the check, so a missing
required field, a wrong type, a malformed timestamp and an undeclared extra field all fail. The client
then raises the mismatch as an AssertionError naming the operation, the status and the validation error,
so the test fails at the request that got the wrong body."""

from __future__ import annotations

import copy
import json
from typing import Any

from aiohttp import TraceConfig, TraceRequestEndParams, web
from aiohttp.test_utils import BaseTestServer, TestClient, TestServer
from jsonschema_rs import Draft202012Validator

from web.kernel.appkeys import ERROR_STYLE
from web.kernel.replies import ANSWER_MISMATCH
from web.kernel.routing import API, Api, Operation

JSON_TYPES = ("application/json", "application/problem+json")

# Operations that answer no JSON, each with its reason; their content type must be the documented one.
NOT_JSON = {
    ("GET", "/api/documents/{id}/download"): "binary DOCX, declared as such in /openapi.json",
    # The share-link review page and its forms: HTML (text/html in /openapi.json); a form answers a page
    # or a 303 back to the page, and a refusal is a page with its status (checked in tests/sharing).
    ("GET", "/share/{token}"): "HTML review page",
    ("POST", "/share/{token}/verify"): "HTML form: the code form",
    ("POST", "/share/{token}/code"): "HTML form: 303 to the page with the session cookie",
    ("POST", "/share/{token}/comments"): "HTML form: 303 to the page",
    ("POST", "/share/{token}/comments/{commentId}/resolve"): "HTML form: 303 to the page",
    ("POST", "/share/{token}/proposals/{proposalId}/decide"): "HTML form: 303 to the page",
    ("GET", "/share/{token}/media/{name}"): "a picture of the shared DOCX (image/png and the like)",
    # On the hub only (the document API answers them with metadata): OAuth is not served there.
    ("GET", "/.well-known/oauth-authorization-server"): "the hub's: only ever its 404 error body",
    ("GET", "/.well-known/oauth-protected-resource"): "the hub's: only ever its 404 error body",
    # The OAuth sign-in and consent page and its form (the document API): HTML, or a 303 to the client.
    ("GET", "/oauth/authorize"): "HTML consent page, or a 303 back to the client with an error",
    ("POST", "/oauth/authorize"): "HTML form: a 303 back to the client, or the page again",
}
# Responses that are neither the declared success body nor the error model, each with its reason.
OTHER_BODIES: dict[tuple[str, str, int], str] = {
    ("GET", "/readyz", 503): "the Readiness body: a probe or an operator sees which dependency is down",
}


def strict(node: Any) -> None:
    """Forbid properties a schema does not list, so an undeclared field fails the check (a model that
    allows extras, like the error models, says so with additionalProperties: true, which stays)."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
        for value in node.values():
            strict(value)
    elif isinstance(node, list):
        for value in node:
            strict(value)


class Declarations:
    """What one kind of app declares: its OpenAPI document, with strict schemas for the check."""

    _cache: dict[tuple[Any, ...], Declarations] = {}

    def __init__(self, api: Api) -> None:
        self.spec = api.openapi()
        components = copy.deepcopy(self.spec["components"])
        strict(components)
        self.components = components
        self.operations: dict[tuple[str, str], Operation] = {
            (op.method, path): op for op in api.operations for path in (op.path, *op.aliases)
        }
        self.error_schema = {"$ref": f"#/components/schemas/{api.error_model.__name__}"}
        self._validators: dict[str, Draft202012Validator] = {}

    @classmethod
    def of(cls, api: Api) -> Declarations:
        # Every test builds its apps afresh; their documents are the same, so build each one once.
        key = (
            type(api),
            api.title,
            api.error_model,
            tuple((op.method, op.path, op.status, op.response, op.endpoint) for op in api.operations),
        )
        if key not in cls._cache:
            cls._cache[key] = cls(api)
        return cls._cache[key]

    def validator(self, schema: dict[str, Any]) -> Draft202012Validator:
        key = json.dumps(schema, sort_keys=True)
        if key not in self._validators:
            # jsonschema-rs, as tests/openapi_verdict.py: the engine schemathesis judges with, and quick
            # enough to check every response of the suite (the pure-Python validator took an eighth of
            # an API test's time).
            self._validators[key] = Draft202012Validator(
                {**schema, "components": self.components}, validate_formats=True
            )
        return self._validators[key]


class ResponseChecker:
    """Checks one app's responses against its declarations; collects the mismatches."""

    def __init__(self, api: Api, error_style: str) -> None:
        self.declared = Declarations.of(api)
        self.error_type = "application/problem+json" if error_style == "problem" else "application/json"
        self.failures: list[str] = []
        self.checked = 0  # bodies validated, so a test can tell the check ran

    @classmethod
    def install(cls, app: web.Application) -> ResponseChecker:
        checker = cls(app[API], app[ERROR_STYLE])
        app.middlewares.insert(0, checker.middleware)  # outermost: it sees rendered error bodies too
        return checker

    @web.middleware
    async def middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        response = await handler(request)
        problem = self.problem(request, response)
        if problem:
            self.failures.append(f"{request.method} {request.path_qs} -> {response.status}: {problem}")
        return response

    def problem(self, request: web.Request, response: web.StreamResponse) -> str | None:
        if (refused := request.get(ANSWER_MISMATCH)) is not None:
            # The operation refused its handler's answer (a 500 with the error body): fail the test with why.
            return f"the answer does not match the operation's response model: {refused}"
        resource = request.match_info.route.resource
        op = self.declared.operations.get((request.method, resource.canonical)) if resource else None
        if resource is not None and op is None:
            return None  # not an API operation: /openapi.json, MCP (JSON-RPC bodies of its own)
        if not isinstance(response, web.Response) or response.status < 200:
            # A stream it answered itself: its media type must be the declared one (the events streams).
            if op is not None and response.status == op.status and response.content_type != op.content_type:
                where = f"operation {op.method} {op.path}"
                return f"{where}: streamed {response.content_type}, not {op.content_type}"
            return None
        status, ctype = response.status, response.content_type
        where = f"operation {op.method} {op.path}" if op else "unmatched route"
        if op is not None and (op.method, op.path, status) in OTHER_BODIES:
            return None
        if status >= 400:
            if op is not None and op.content_type == "text/html" and ctype == "text/html":
                return None  # an HTML page's refusal is a page too (the share-link review page)
            if op is not None and status in op.refusals:  # the operation's own (PACT's onboard rejection)
                if ctype != "application/json":
                    return f"{where}: error content type {ctype}, expected application/json"
                return self.validate(
                    where, {"$ref": f"#/components/schemas/{op.refusals[status].__name__}"}, response
                )
            if op is not None and op.error_model is not None:  # OAuth's {error, error_description}
                if ctype != "application/json":
                    return f"{where}: error content type {ctype}, expected application/json"
                ref = {"$ref": f"#/components/schemas/{op.error_model.__name__}"}
                return self.validate(where, ref, response)
            if ctype != self.error_type:
                return f"{where}: error content type {ctype}, expected {self.error_type}"
            return self.validate(where, self.declared.error_schema, response)
        if status >= 300 or op is None:
            return None
        if status != op.status and status not in op.also:
            return f"{where}: status {status}, declared {op.status} and {sorted(op.also)}"
        entry = self.declared.spec["paths"][op.path][op.method.lower()]["responses"][str(status)]
        documented = entry.get("content", {})
        if ctype not in documented:
            return f"{where}: content type {ctype}, declared {sorted(documented)}"
        if ctype not in JSON_TYPES:
            return None
        if op.response is None:
            return f"{where} answers JSON but declares no response model"
        return self.validate(where, documented[ctype]["schema"], response)

    def validate(self, where: str, schema: dict[str, Any], response: web.Response) -> str | None:
        self.checked += 1
        try:
            body = json.loads(response.body)  # type: ignore[arg-type]
        except (TypeError, ValueError) as exc:
            return f"{where}: the body is not JSON ({exc})"
        validator = self.declared.validator(schema)
        if validator.is_valid(body):
            return None
        errors = sorted(validator.iter_errors(body), key=lambda e: list(map(str, e.instance_path)))
        found = "; ".join(
            f"{'/'.join(map(str, e.instance_path)) or '(body)'}: {e.message[:300]}" for e in errors[:5]
        )
        return f"{where}: {found}"


class CheckedClient(TestClient):
    """The suite's test client (conftest's aiohttp_client_cls): an app built from an Api gets the
    checker, and a request whose response broke the declaration raises AssertionError on arrival."""

    def __init__(self, server: BaseTestServer, **kwargs: Any) -> None:
        app = server.app if isinstance(server, TestServer) else None
        self.checker = ResponseChecker.install(app) if app is not None and API in app else None
        traces = list(kwargs.pop("trace_configs", None) or [])
        if self.checker is not None:
            trace = TraceConfig()
            trace.on_request_end.append(self._on_request_end)
            traces.append(trace)
        super().__init__(server, trace_configs=traces, **kwargs)

    async def _on_request_end(self, _session: Any, _ctx: Any, _params: TraceRequestEndParams) -> None:
        self.raise_failures()

    def raise_failures(self) -> None:
        if self.checker is not None and self.checker.failures:
            failures = list(self.checker.failures)
            self.checker.failures.clear()
            raise AssertionError("response does not match its declaration:\n" + "\n".join(failures))

    async def close(self) -> None:
        await super().close()
        self.raise_failures()  # a mismatch whose response never reached the test
