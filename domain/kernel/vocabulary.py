"""A vocabulary is one `StrEnum` in the domain area that owns it. A request or response model types its field
`Annotated[TheEnum, SpeltOut(TheEnum)]`: the field takes and gives the enum's members, and its JSON Schema is
the values written in place (`enum` + `type: string`, with the field's title), as the documents have always
shown them, rather than a reference to a schema of its own."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema


@dataclass(frozen=True)
class SpeltOut:
    """The field's values: the vocabulary's, in order, then `also` (plain strings a wire field adds)."""

    vocabulary: type[StrEnum]
    also: tuple[str, ...] = ()

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        values = [*(v.value for v in self.vocabulary), *self.also]
        return core_schema.no_info_after_validator_function(self._member, core_schema.literal_schema(values))

    def _member(self, value: str) -> StrEnum | str:
        return value if value in self.also else self.vocabulary(value)
