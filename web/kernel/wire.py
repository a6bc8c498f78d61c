"""Wire types shared by both apps' response models: ISO 8601 UTC timestamps and calendar dates. They
are strings on the wire; the schema's format lets the tests check every one the apps return."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, WithJsonSchema

Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
Date = Annotated[str, WithJsonSchema({"type": "string", "format": "date"})]
# Offsets and cursors are bound by what both databases take as an integer parameter (PostgreSQL's INTEGER);
# a larger number is a 400 naming the field, never an overflow inside the driver.
MAX_INT = 2_147_483_647


class Exact(BaseModel):
    """A response built field by field from a domain result: no field outside the model is sent."""

    model_config = ConfigDict(extra="forbid")


# JSON Schema of an escalation body: its text comes as `question` or `message`, at least one of them
# (domain.consensus.escalations.question_of refuses two different texts).
ONE_OF_QUESTION_MESSAGE: dict[str, Any] = {"anyOf": [{"required": ["question"]}, {"required": ["message"]}]}
