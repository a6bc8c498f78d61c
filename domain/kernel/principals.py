"""Principals: who an agent acts for (PACT §4.4, §15.4, §17.13).

A principal is a DID (`did:web:org-a.example`, `did:key:z6Mk…`). Concord learns it from the credential, never
from a request body: an operator attests it when minting a service key (`concord keys create --principal`),
and every agent that key joins as acts for it. An agent whose key names no principal is its own principal,
`urn:concord:agent:<agent id>`.

Two members are of different organisations (cross-org, §15.4) when their Concord organisations differ, or when
both act for `did:web` principals whose registrable domains (eTLD+1, by the Public Suffix List) differ: one
organisation's keys may act for principals of several domains, and disclosure follows the principals."""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import unquote

from publicsuffixlist import PublicSuffixList

from domain.kernel.errors import BadRequest

# did:<method>:<method-specific id> (W3C DID Core §3.1), bounded to what a column holds.
DID = re.compile(r"^did:[a-z0-9]+:[A-Za-z0-9._%:-]*[A-Za-z0-9._%-]$")
MAX_LENGTH = 255
AGENT_URN = "urn:concord:agent:"


def parse(raw: str, *, field: str = "principal") -> str:
    """A DID as given (trimmed), or 400 naming the field."""
    value = raw.strip()
    if len(value) > MAX_LENGTH or not DID.fullmatch(value):
        raise BadRequest(
            f"{field} must be a DID such as did:web:example.org (at most {MAX_LENGTH} characters)",
            field=field,
        )
    return value


def of_agent(member_id: str, principal: str | None) -> str:
    """The principal an agent acts for: its key's, or itself."""
    return principal or f"{AGENT_URN}{member_id}"


@lru_cache(maxsize=1)
def _suffixes() -> PublicSuffixList:
    return PublicSuffixList()


def registrable_domain(principal: str) -> str | None:
    """A did:web principal's registrable domain (`did:web:alerts.org-a.example:users:1` → `org-a.example`);
    None for any other principal."""
    if not principal.startswith("did:web:"):
        return None
    host = unquote(principal[len("did:web:") :].split(":", 1)[0]).split(":", 1)[0].lower().rstrip(".")
    if not host:
        return None
    return _suffixes().privatesuffix(host) or host


def cross_org(org_a: str, principal_a: str, org_b: str, principal_b: str) -> bool:
    """Whether two members are of different organisations (§15.4)."""
    if org_a != org_b:
        return True
    domain_a, domain_b = registrable_domain(principal_a), registrable_domain(principal_b)
    return domain_a is not None and domain_b is not None and domain_a != domain_b
