"""Wire types shared by both apps' response models: ISO 8601 UTC timestamps and calendar dates. They
are strings on the wire; the schema's format lets the tests check every one the apps return."""

from __future__ import annotations

from typing import Annotated

from pydantic import WithJsonSchema

Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
Date = Annotated[str, WithJsonSchema({"type": "string", "format": "date"})]
