"""Check a real response body against the schema an app's /openapi.json documents for it, with every
object closed (a field the document does not list fails the check)."""

from __future__ import annotations

import copy
from typing import Any

from jsonschema import Draft202012Validator


def _close(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
        for value in node.values():
            _close(value)
    elif isinstance(node, list):
        for value in node:
            _close(value)


class Documented:
    """The OpenAPI document of one app, fetched once per test."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = copy.deepcopy(spec)
        _close(self.spec["components"])

    @classmethod
    async def of(cls, client: Any) -> Documented:
        return cls(await (await client.get("/openapi.json")).json())

    def check(self, path: str, method: str, status: int, body: Any) -> None:
        """Fail unless `body` matches the documented `status` response of `method path` (a template path)."""
        operation = self.spec["paths"][path][method.lower()]
        content = operation["responses"][str(status)]["content"]
        schema = next(iter(content.values()))["schema"]
        assert "$ref" in schema, f"{method} {path} documents no response model"
        validator = Draft202012Validator({**schema, "components": self.spec["components"]})
        errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(body)]
        assert errors == [], (method, path, errors[:3])
