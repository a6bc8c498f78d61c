"""The wire shapes invite tokens have on both apps (PACT §4.1 join-token): what an owner sends to issue one,
what it sees of one, and what an invited agent sends to join. Each app adds the resource's own id field."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from domain.kernel import invites
from domain.kernel.clock import iso
from domain.kernel.invites import InviteStatus, InviteView
from web.kernel.wire import HAS_LETTER_OR_DIGIT, Timestamp, Trimmed


class InviteCreate(Trimmed):
    model_config = ConfigDict(extra="ignore")
    expiresInSeconds: int = Field(
        default=invites.DEFAULT_TTL_SECONDS,
        ge=60,
        le=invites.MAX_TTL_SECONDS,
        description="How long the invite can be used, in seconds (default 7 days, at most 90).",
    )
    maxUses: int = Field(
        default=1, ge=1, le=invites.MAX_USES, description="How many agents may join with it (default 1)."
    )
    label: str | None = Field(default=None, max_length=200, description="A note for the owner's list.")


class InviteFields(BaseModel):
    """What an owner sees of an invite; never the token."""

    id: str
    label: str | None
    status: InviteStatus
    maxUses: int
    uses: int
    createdAt: Timestamp
    expiresAt: Timestamp
    revokedAt: Timestamp | None

    @staticmethod
    def fields_of(found: InviteView) -> dict[str, object]:
        return {
            "id": found.id,
            "label": found.label,
            "status": found.status,
            "maxUses": found.max_uses,
            "uses": found.uses,
            "createdAt": iso(found.created_at),
            "expiresAt": iso(found.expires_at),
            "revokedAt": iso(found.revoked_at),
        }


TOKEN_TEXT = "The invite token, shown this once (only its hash is kept)"


class JoinTokenBody(Trimmed):
    model_config = ConfigDict(extra="ignore")
    agentName: Annotated[str, HAS_LETTER_OR_DIGIT] = Field(
        min_length=1, max_length=128, description="The agent's display name; a letter or digit."
    )
    token: str = Field(min_length=1, max_length=invites.MAX_TOKEN_LENGTH, description="The invite token")


JOIN_TOKEN_ERRORS = {
    403: "The invite token is not valid here (unknown, expired, revoked or used up: one answer for all)",
    409: "An agent of that name already exists",
    429: "Too many joins from this client (settings.rate_limit_register per minute)",
}
