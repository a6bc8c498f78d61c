"""Wire types shared by both apps' response models: ISO 8601 UTC timestamps and calendar dates. They
are strings on the wire; the schema's format lets the tests check every one the apps return."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, WithJsonSchema

from domain.kernel import jurisdictions

Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
Date = Annotated[str, WithJsonSchema({"type": "string", "format": "date"})]
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


# Patterns that put into the OpenAPI documents what a handler or the domain checks beyond the types, so a
# request the schema admits is one the operation accepts. They go into the JSON Schema only
# (json_schema_extra): the checks themselves stay where they are, with their own messages.
HAS_TEXT = r"\S"  # something besides whitespace (strings are stripped before their length is checked)
HAS_ALNUM = r"[A-Za-z0-9]"  # at least one letter or digit (of the market's search terms)


def _any_case(word: str) -> str:
    return "".join(
        f"[{c.upper()}{c.lower()}]" if c.upper() != c.lower() else ("\\." if c == "." else c) for c in word
    )


def words_pattern(words: Iterable[str], *, blank: bool = True) -> str:
    """One of `words` in any case, with surrounding whitespace; with `blank`, nothing at all too."""
    alternatives = "|".join(_any_case(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))
    return rf"^\s*(?:{alternatives}){'?' if blank else ''}\s*$"


def pattern(regex: str) -> dict[str, Any]:
    """A field's `json_schema_extra` documenting the pattern its checks enforce."""
    return {"pattern": regex}


# ISO 3166-1 country, optionally an ISO 3166-2 subdivision (domain/topics/store.py JURISDICTION), any case.
TOPIC_JURISDICTION = r"^\s*[A-Za-z]{2}(?:-[A-Za-z0-9]{1,3})?\s*$"
TOPIC_JURISDICTION_FILTER = r"^\s*(?:[A-Za-z]{2}(?:-[A-Za-z0-9]{1,3})?)?\s*$"

# The Axiom listings' jurisdiction filter (domain/kernel/jurisdictions.py prefix_filter): a code, an AGLC
# abbreviation or the start of a code, in any case; blank is no filter.
JURISDICTION_PREFIX = words_pattern(jurisdictions.SPELLINGS + jurisdictions.PREFIXES)
JURISDICTION = words_pattern(jurisdictions.SPELLINGS, blank=False)
