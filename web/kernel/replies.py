"""An operation's answer serialised through its declared response model (issue 32).

A handler returns its value (a dict or list as the domain built it, or an instance of the response model);
the operation's `Shape`, built once per operation, checks it strictly against the `response=` model and
writes it as JSON bytes. Strictly: a key the model does not declare, a missing required field or a value of
the wrong type (a string for a number, 1 for a boolean) is a `ResponseMismatch`, a programming error that
fails at once in every environment (a 500, logged with the operation: docs/decisions.md).

The check does not change what is sent: a dict's keys go out as given (a field it leaves out does not
appear as null) and the models' request-side field validators (trimming, NUL checks, vocabulary members)
are not run on answers. A model instance goes out through the model's own serialiser, by alias."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from pydantic import BaseModel
from pydantic_core import CoreSchema, SchemaSerializer, SchemaValidator, ValidationError

JSON = "application/json"
# Scalar types whose lax validation would convert another type ("5" to 5, 1 to True): checked strictly.
_STRICT = ("int", "str", "bool")
# The bounds a float field's strict int alternative keeps.
_BOUNDS = ("ge", "gt", "le", "lt", "multiple_of")


@dataclass(frozen=True)
class Reply:
    """A handler's value with a status or headers other than its route's (202 while still running)."""

    value: Any
    status: int | None = None
    headers: Mapping[str, str] | None = None


# What an operation's handler answers: a response of its own, or a value its response model describes.
Answer = web.StreamResponse | Reply | BaseModel | dict[str, Any] | list[Any]


class ResponseMismatch(RuntimeError):
    """A handler answered a body its operation's response model does not describe: a programming error."""


class Shape:
    """One operation's response model, made into a strict checker and a serialiser of its JSON bytes."""

    def __init__(self, model: type[BaseModel], where: str, status: int = 200) -> None:
        self.model = model
        self.where = where
        self.status = status
        schema = _answer_schema(model.__pydantic_core_schema__)
        self._validator = SchemaValidator(schema)
        self._serializer = SchemaSerializer(schema)

    def dump(self, value: Any) -> bytes:
        """The value as its model's JSON bytes; ResponseMismatch when the model does not describe it."""
        if isinstance(value, self.model):
            return self.model.__pydantic_serializer__.to_json(value, by_alias=True)
        if isinstance(value, BaseModel):
            raise ResponseMismatch(
                f"{self.where}: answered a {type(value).__name__}, not a {self.model.__name__}"
            )
        if not isinstance(value, dict | list):
            value = self._from_attributes(value)
            return self.model.__pydantic_serializer__.to_json(value, by_alias=True)
        try:
            checked = self._validator.validate_python(value)
        except ValidationError as exc:
            raise ResponseMismatch(
                f"{self.where}: the answer does not match {self.model.__name__}: {_errors(exc)}"
            ) from None
        return self._serializer.to_json(checked, by_alias=True)

    def _from_attributes(self, value: Any) -> BaseModel:
        """A record (a dataclass or any object) whose attributes are named as the model's fields."""
        try:
            return self.model.model_validate(value, from_attributes=True)
        except ValidationError as exc:
            raise ResponseMismatch(
                f"{self.where}: the {type(value).__name__} answered does not match {self.model.__name__}: "
                f"{_errors(exc)}"
            ) from None

    def response(self, value: Any, status: int, headers: Mapping[str, str] | None = None) -> web.Response:
        return web.Response(body=self.dump(value), status=status, content_type=JSON, headers=headers)


# The operation's Shape, for a read that serialises its answer itself (web/kernel/request.py cached_json), and
# the mismatch an answer was refused for (the suite's checker fails the test with it).
SHAPE = web.RequestKey("response_shape", Shape)
ANSWER_MISMATCH = web.RequestKey("answer_mismatch", str)


def serialised(request: web.Request, value: Any) -> web.Response:
    """The value as the request's operation answers it, for a handler that adds to the response itself (a
    cookie): serialised through the operation's model, with its status."""
    shape = request[SHAPE]
    return shape.response(value, shape.status)


def _errors(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '(body)'}: {e['msg']}" for e in exc.errors()[:5]
    )


def _answer_schema(node: Any) -> Any:
    """The model's core schema as an answer checker: each model a typed dict of its fields (no instance is
    built, so a field the answer leaves out stays out), forbidding undeclared keys unless the model allows
    extras; defaults and field validators dropped (they shape requests); scalars strict."""
    if isinstance(node, list):
        return [_answer_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if kind in ("function-after", "function-before", "function-wrap"):
        return _answer_schema(node["schema"])
    if kind == "function-plain":
        return {"type": "any"}
    if kind == "default":
        return _answer_schema(node["schema"])
    if kind == "model":
        return _typed_dict(node)
    out = {k: _answer_schema(v) for k, v in node.items() if k not in ("serialization", "metadata")}
    if kind in _STRICT:
        out["strict"] = True
    elif kind == "float":
        # An int is a number too, and stays one on the wire (1, not 1.0); a bool or a string is not.
        as_int = {"type": "int", "strict": True, **{k: out[k] for k in _BOUNDS if k in out}}
        return {"type": "union", "choices": [as_int, {**out, "strict": True}], "mode": "left_to_right"}
    return out


def _typed_dict(model: dict[str, Any]) -> CoreSchema:
    inner = model["schema"]
    if model.get("root_model"):
        root = _answer_schema(inner)
        return {**root, "ref": model["ref"]} if "ref" in model else root
    while inner.get("type") != "model-fields":  # a model validator's wrapper
        inner = inner["schema"]
    extra = inner.get("extra_behavior") or model.get("config", {}).get("extra_fields_behavior")
    fields = {}
    for name, field in inner["fields"].items():
        entry: dict[str, Any] = {
            "type": "typed-dict-field",
            "schema": _answer_schema(field["schema"]),
            "required": field["schema"].get("type") != "default",
        }
        for key in ("validation_alias", "serialization_alias", "serialization_exclude"):
            if key in field:
                entry[key] = field[key]
        fields[name] = entry
    schema: dict[str, Any] = {
        "type": "typed-dict",
        "fields": fields,
        "extra_behavior": "allow" if extra == "allow" else "forbid",
    }
    if "ref" in model:
        schema["ref"] = model["ref"]
    return schema
