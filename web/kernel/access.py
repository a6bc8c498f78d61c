"""What an operation needs from its caller, declared on its route (`access=Agent()`) and enforced by the
routing layer before the request's input is read, so a bad credential answers 401 (or 403) whatever
the body says.

The declarations are plain data; each app hands its Api one guard per kind it accepts (web/hub/auth.py,
web/docs/auth.py). A guard authenticates the key (401), checks what the declaration asks for (403), and
caches the principal on the request, where the handler reads it without looking the key up again."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

from aiohttp import web

# The document API's scopes (spec/document-api.md §5; domain/documents/servicekeys.py SCOPES).
ServiceScope = Literal[
    "documents:read", "documents:write", "comments:read", "comments:write", "tap:read", "tap:write"
]
StaffRole = Literal["curator", "reviewer"]


@dataclass(frozen=True)
class Access:
    """Base of the declarations. `scheme` names the OpenAPI security scheme (None: no credential)."""

    kind: ClassVar[str]
    scheme: ClassVar[str | None]

    def requirement(self) -> list[str]:
        """The roles OpenAPI 3.1 lists under the scheme in the operation's `security`."""
        return []

    def describe(self) -> str:
        raise NotImplementedError

    def extension(self) -> dict[str, Any]:
        """The operation's `x-access` member: the declaration as data."""
        return {"kind": self.kind}

    def responses(self) -> dict[int, str]:
        return {}


@dataclass(frozen=True)
class Anonymous(Access):
    kind = "anonymous"
    scheme = None

    def describe(self) -> str:
        return "No credential needed."


@dataclass(frozen=True)
class Agent(Access):
    """An agent key (pact_sk_) from hub registration."""

    kind = "agent"
    scheme = "agentBearer"

    def describe(self) -> str:
        return "Needs an agent key (pact_sk_…)."

    def responses(self) -> dict[int, str]:
        return {401: "Missing or invalid agent key"}


@dataclass(frozen=True)
class Commercial(Access):
    """A commercial Axiom key (pact_ax_). A metered operation spends one credit once its input is
    valid (the handler calls web/hub/auth.py spend_credit); the routing layer refuses to answer a
    metered operation successfully without that charge."""

    metered: bool = False
    kind = "commercial"
    scheme = "commercialBearer"

    def describe(self) -> str:
        cost = "costs 1 credit" if self.metered else "free"
        return f"Needs a commercial key (pact_ax_…); {cost}."

    def extension(self) -> dict[str, Any]:
        return {"kind": self.kind, "metered": self.metered}

    def responses(self) -> dict[int, str]:
        found = {401: "Missing or invalid commercial key (agent keys are refused)"}
        return {**found, 402: "No credits left in the current billing period"} if self.metered else found


@dataclass(frozen=True)
class Service(Access):
    """A document API service key (svc_sk_), or a signed-in person's access token (JWT), holding `scope`."""

    scope: ServiceScope
    kind = "service"
    scheme = "apiKey"

    def requirement(self) -> list[str]:
        return [self.scope]

    def describe(self) -> str:
        return f"Needs a service key (svc_sk_…) or a person's access token with the scope {self.scope}."

    def extension(self) -> dict[str, Any]:
        return {"kind": self.kind, "scope": self.scope}

    def responses(self) -> dict[int, str]:
        return {
            401: "Missing, invalid or revoked API key, or an invalid or expired access token",
            403: f"The key or person lacks the scope {self.scope}",
        }


@dataclass(frozen=True)
class Staff(Access):
    """An operator-issued staff key (staff_sk_); with `role`, only staff holding that role."""

    role: StaffRole | None = None
    kind = "staff"
    scheme = "staffBearer"

    def requirement(self) -> list[str]:
        return [self.role] if self.role else []

    def describe(self) -> str:
        if self.role:
            return f"Needs a staff key (staff_sk_…) with the role {self.role}."
        return "Needs a staff key (staff_sk_…), any role."

    def extension(self) -> dict[str, Any]:
        return {"kind": self.kind, "role": self.role}

    def responses(self) -> dict[int, str]:
        found = {401: "Missing or invalid staff key"}
        return {**found, 403: f"The staff key lacks the role {self.role}"} if self.role else found


ANONYMOUS = Anonymous()

# Authenticates (401) and authorises (403) a request for the declaration it is given; caches the principal.
Guard = Callable[[web.Request, Any], Awaitable[None]]

# The declaration of the operation a request is for, set before its guard runs.
ACCESS = web.RequestKey("access", Access)
# Credits left after a metered call's charge; its presence says the call was charged.
CREDITS_REMAINING = web.RequestKey("credits_remaining", int)

P = TypeVar("P")


def principal(request: web.Request, key: web.RequestKey[P]) -> P:
    """The principal a guard cached; reading one the route did not declare is a programming error."""
    try:
        return request[key]
    except KeyError:
        declared = request.get(ACCESS, ANONYMOUS)
        raise RuntimeError(
            f"{request.method} {request.path} reads {key!r}, but its route declares access={declared}"
        ) from None
