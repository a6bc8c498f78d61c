"""What an app's /openapi.json says of one request: whether its query parameters and JSON body are valid
for the operation, judged by a JSON Schema validator (Draft 2020-12, jsonschema-rs: the engine schemathesis
judges its cases with, whose patterns read as ECMA 262 with the u flag). The tests compare this verdict with
the wire's."""

from __future__ import annotations

from typing import Any

from jsonschema_rs import Draft202012Validator


def _validator(spec: dict[str, Any], schema: dict[str, Any]) -> Draft202012Validator:
    # `#/components/...` references resolve against the root of what is validated: carry the components.
    return Draft202012Validator({**schema, "components": spec["components"]}, validate_formats=True)


def _typed(value: str, schema: dict[str, Any]) -> Any:
    """A query string's value as the type its schema names (a query is text on the wire)."""
    kinds = {schema.get("type")} | {s.get("type") for s in schema.get("anyOf", [])}
    if "integer" in kinds:
        try:
            return int(value)
        except ValueError:
            return value
    if "number" in kinds:
        try:
            return float(value)
        except ValueError:
            return value
    if "boolean" in kinds and value in ("true", "false"):
        return value == "true"
    return value


def errors(
    spec: dict[str, Any],
    method: str,
    path: str,
    *,
    query: dict[str, str] | None = None,
    body: Any = None,
) -> list[str]:
    """Why the document refuses the request (empty when it admits it): its query parameters (present and
    required ones) and its JSON body against the operation's schemas."""
    operation = spec["paths"][path][method.lower()]
    found: list[str] = []
    given = dict(query or {})
    for param in operation.get("parameters", []):
        if param["in"] != "query":
            continue
        name = param["name"]
        if name not in given:
            if param.get("required"):
                found.append(f"{name}: required")
            continue
        value = _typed(given.pop(name), param["schema"])
        found += [f"{name}: {e.message}" for e in _validator(spec, param["schema"]).iter_errors(value)]
    if body is not None:
        schema = operation["requestBody"]["content"]["application/json"]["schema"]
        found += [
            f"{'.'.join(map(str, e.instance_path)) or 'body'}: {e.message}"
            for e in _validator(spec, schema).iter_errors(body)
        ]
    return found
