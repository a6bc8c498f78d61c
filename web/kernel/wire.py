"""Wire types shared by both apps' response models: ISO 8601 UTC timestamps and calendar dates. They
are strings on the wire; the schema's format lets the tests check every one the apps return."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from domain.consensus.models import EscalationPriority
from domain.kernel import jurisdictions

Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
Date = Annotated[str, WithJsonSchema({"type": "string", "format": "date"})]


def _priorities(levels: Iterable[EscalationPriority]) -> tuple[str, ...]:
    """How the levels may be spelled on input: `normal` (the hub's former word) is also medium."""
    words = [p.value for p in levels]
    return (*words, "normal") if EscalationPriority.MEDIUM.value in words else tuple(words)


def _priority_reader(levels: Iterable[EscalationPriority]) -> Callable[[object], object]:
    spellings = _priorities(levels)

    def read(value: object) -> object:
        if isinstance(value, str) and value in spellings:
            return EscalationPriority.parse(value)
        raise PydanticCustomError("priority", "must be one of {words}", {"words": ", ".join(spellings)})

    return read


_HUB_LEVELS = tuple(EscalationPriority)
_DOCUMENT_LEVELS = (EscalationPriority.LOW, EscalationPriority.MEDIUM, EscalationPriority.HIGH)
# An escalation's priority on input, in the one vocabulary (EscalationPriority) or the hub's former `normal`
# (read as medium): the hub takes every level; the document API those its spec names (low, medium, high).
PriorityIn = Annotated[
    EscalationPriority,
    BeforeValidator(_priority_reader(_HUB_LEVELS)),
    WithJsonSchema({"type": "string", "enum": list(_priorities(_HUB_LEVELS))}),
]
DocumentPriorityIn = Annotated[
    EscalationPriority,
    BeforeValidator(_priority_reader(_DOCUMENT_LEVELS)),
    WithJsonSchema({"type": "string", "enum": list(_priorities(_DOCUMENT_LEVELS))}),
]
# Offsets and cursors are bound by what both databases take as an integer parameter (PostgreSQL's INTEGER);
# a larger number is a 400 naming the field, never an overflow inside the driver.
MAX_INT = 2_147_483_647


class Exact(BaseModel):
    """A response built field by field from a domain result: no field outside the model is sent."""

    model_config = ConfigDict(extra="forbid")


# What the approval fields of a topic and a document mean (both apps' models describe them alike).
APPROVAL_POLICY_TEXT = (
    "How proposals merge (PACT §5): concord-default (two approvals, or every voter when fewer; at the TTL an "
    "approved proposal with nothing against it merges), objection-based (silence is consent: merges at its "
    "TTL unless an agent objects), single, majority or unanimous (approvals of the agents who may vote), "
    "human-only (a reviewer decides) or auto (merges on creation)."
)
SELF_APPROVAL_TEXT = (
    "Under single, majority and unanimous: the author of a proposal is one of its voters and its approval "
    "counts (default false: an author never votes on its own proposal)."
)


# JSON Schema of an escalation body: its text comes as `question` or `message`, at least one of them
# (domain.consensus.escalations.question_of refuses two different texts).
# Both may come only with the same text, which a schema cannot say: it admits one of the two.
ONE_OF_QUESTION_MESSAGE: dict[str, Any] = {
    "oneOf": [
        {
            "required": [given],
            "properties": {given: {"type": "string", "pattern": r"\S"}, other: {"type": "null"}},
        }
        for given, other in (("question", "message"), ("message", "question"))
    ]
}


# ---- rules on strings -------------------------------------------------------------------------------
# A rule a request's string must keep beyond its type and length is a `Rule`: one regular expression that is
# both the check and the field's `pattern` in the OpenAPI document, so the two cannot drift. Its patterns
# mean the same to Python's `re` and to the engines that read JSON Schema (ECMA 262 with the u flag, as
# 2020-12 asks, and the fuzzer's Rust engine): no \s, \S, \w, \d or \b, whose readings differ, and a `$`
# that ends the string (Python's would also match before a final newline; the check reads it as \Z).

# White space as Python's str.isspace() and str.strip() know it (what the models trim), spelt out.
WHITE_SPACE = r"\t-\r\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
NOT_SPACE = f"[^{WHITE_SPACE}]"
ANY_CHARACTER = r"[\s\S]"
_SYNTAX = set("^$\\.*+?()[]{}|/")


@dataclass(frozen=True)
class Rule:
    """A string rule as an `Annotated` marker: `Annotated[str, rule]` refuses a value the pattern does not
    find in, with `message` (the 400 names the field), and documents the pattern. `test` replaces the
    pattern's search where Python's `re` cannot read it (Unicode properties such as L, letters)."""

    pattern: str
    message: str
    # The error code of the 400 when the operation documents one of its own (else validation_error).
    code: str | None = None
    test: Callable[[str], bool] | None = None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        test = self.test or re.compile(_python_reading(self.pattern)).search
        message, context = self.message, ({"code": self.code} if self.code else None)

        def check(value: str) -> str:
            if not test(value):
                raise PydanticCustomError("string_rule", message, context)
            return value

        return core_schema.no_info_after_validator_function(check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        out: dict[str, Any] = handler(schema)
        out["pattern"] = self.pattern
        return out


def _python_reading(pattern: str) -> str:
    """The pattern for Python's `re`: each `$` outside a character class as the end of the string."""
    out: list[str] = []
    in_class = escaped = False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == "$" and not in_class:
            out.append(r"\Z")
            continue
        out.append(ch)
    return "".join(out)


def _escape(word: str) -> str:
    """A literal word in a pattern, escaping only syntax characters (ECMA's u flag refuses other escapes)."""
    return "".join(f"\\{ch}" if ch in _SYNTAX else ch for ch in word)


def at_least(count: int) -> Rule:
    """At least `count` characters once the white space at either end is left out (what a request model
    keeps, see `Trimmed`)."""
    if count <= 1:
        return HAS_TEXT
    return Rule(
        f"{NOT_SPACE}{ANY_CHARACTER}{{{count - 2},}}{NOT_SPACE}",
        f"must have at least {count} characters besides white space at either end",
    )


def one_of(words: Iterable[str], *, listed: str | None = None) -> Rule:
    """Exactly one of `words`, as written (no other case, no white space)."""
    ordered = sorted(set(words), key=lambda w: (-len(w), w))
    alternatives = "|".join(_escape(w) for w in ordered)
    return Rule(rf"^(?:{alternatives})$", f"must be {listed or 'one of ' + ', '.join(ordered)}")


def comma_list(words: Iterable[str]) -> Rule:
    """One or more of `words` separated by commas, as written (no spaces)."""
    names = list(words)
    word = "(?:" + "|".join(_escape(w) for w in sorted(names, key=lambda w: (-len(w), w))) + ")"
    return Rule(rf"^{word}(?:,{word})*$", f"must be one or more of {', '.join(names)}, separated by commas")


def decimal_at_most(limit: int) -> str:
    """A pattern of the decimal numbers from 0 to `limit`, leading zeros allowed up to `limit`'s length
    (what int() reads of them), for a bound a number kept as text must respect."""
    digits = str(limit)
    alternatives = [f"[0-9]{{1,{len(digits) - 1}}}"] if len(digits) > 1 else []
    for i, d in enumerate(digits):
        rest = len(digits) - i - 1
        if int(d) > 0:
            low = "0" if int(d) == 1 else f"[0-{int(d) - 1}]"
            alternatives.append(digits[:i] + low + (f"[0-9]{{{rest}}}" if rest else ""))
    alternatives.append(digits)
    return "(?:" + "|".join(alternatives) + ")"


def has_letter_or_digit(value: str) -> bool:
    return any(ch.isalnum() for ch in value)


HAS_TEXT = Rule(NOT_SPACE, "must contain a character other than white space")
# A letter or digit of any script (Unicode categories L and N; Python: str.isalnum()).
HAS_LETTER_OR_DIGIT = Rule(r"[\p{L}\p{N}]", "must contain a letter or digit", test=has_letter_or_digit)
# The market's search terms are ASCII letters and digits (domain/market/catalog.py WORD).
HAS_ASCII_ALNUM = Rule(r"[A-Za-z0-9]", "must contain a letter or digit (A-Z, a-z, 0-9)")

Text = Annotated[str, HAS_TEXT]  # a string with something besides white space


class AsWritten:
    """Marks a field of a `Trimmed` model whose text is kept exactly as sent (Markdown: leading indentation
    and trailing spaces mean something)."""


class Trimmed(BaseModel):
    """A request model whose strings are validated exactly as sent (so the OpenAPI document generated from
    it says what is accepted) and then kept without the white space at either end, as names and notes are
    stored. A field marked `AsWritten` keeps its text as sent."""

    @field_validator("*", mode="after")
    @classmethod
    def _trim(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name is not None and any(
            isinstance(m, AsWritten) for m in cls.model_fields[info.field_name].metadata
        ):
            return value
        if isinstance(value, str) and not isinstance(value, Enum):
            return value.strip()
        if isinstance(value, list) and any(isinstance(v, str) for v in value):
            return [v.strip() if isinstance(v, str) and not isinstance(v, Enum) else v for v in value]
        return value


# ISO 3166-1 country, optionally an ISO 3166-2 subdivision, in any case; kept in capitals
# (domain/topics/store.py JURISDICTION).
TOPIC_JURISDICTION = Rule(
    r"^[A-Za-z]{2}(?:-[A-Za-z0-9]{1,3})?$",
    "must look like AU or AU-NSW (an ISO 3166 country code, optionally a region code; kept in capitals)",
)

# The Axiom listings' jurisdiction filter (domain/kernel/jurisdictions.py prefix_filter): a code, an AGLC
# abbreviation or the start of a code, as written.
JURISDICTION_PREFIX = one_of(
    jurisdictions.SPELLINGS + jurisdictions.PREFIXES,
    listed=f"{jurisdictions.ALLOWED}, or the start of a code (AU-N matches AU-NSW and AU-NT)",
)
