"""People: staff who keep the final word (curators and reviewers), and the people of an organisation who
sign in to the document API (users, their sessions and the sessions' refresh tokens)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from domain.kernel.clock import utcnow
from domain.kernel.db import Base, JSONType, UTCDateTime
from domain.kernel.ids import new_id


class StaffKey(Base):
    """Operator-issued keys of curators and reviewers (`concord keys create-staff`)."""

    __tablename__ = "staff_keys"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(128))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The key's roles, comma-separated in a fixed order: "curator", "reviewer" or "curator,reviewer".
    roles: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class StaffSession(Base):
    """A staff member signed in to the review pages (`domain/people/staff_sessions.py`): the session token's
    SHA-256 only, the form token (CSRF) of the session, and when it ends: at `expires_at`, or earlier
    when the person signs out (`ended_at`) or the key is revoked."""

    __tablename__ = "staff_sessions"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    staff_key_id: Mapped[str] = mapped_column(ForeignKey("staff_keys.id", ondelete="CASCADE"), index=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class User(Base):
    """A person of an organisation (`concord users create`): signs in with email and password and acts on
    the document API with the scopes given here. Only an Argon2id hash of the password is kept."""

    __tablename__ = "users"
    __table_args__ = (UniqueConstraint("org_id", "email", name="uq_users_org_email"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    org_id: Mapped[str] = mapped_column(ForeignKey("organisations.id"), index=True)
    email: Mapped[str] = mapped_column(String(320), index=True)  # lower-case
    password_hash: Mapped[str] = mapped_column(String(255))
    scopes: Mapped[list[str]] = mapped_column(JSONType, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class UserSession(Base):
    """One sign-in: its access tokens name it (`sid`), its refresh tokens belong to it, and ending it
    (logout, a refresh token used twice, the user disabled) refuses all of them."""

    __tablename__ = "user_sessions"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    refreshed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    end_reason: Mapped[str | None] = mapped_column(String(32))
    # A session an OAuth client opened (POST /oauth/token): the client whose refresh tokens these are, the
    # scopes granted to it (narrower than the person's) and the resource its access tokens are for.
    client_id: Mapped[str | None] = mapped_column(String(64))
    scopes: Mapped[list[str] | None] = mapped_column(JSONType)
    audience: Mapped[str | None] = mapped_column(String(2000))


class RefreshToken(Base):
    """An opaque refresh token of a session (only its SHA-256 is kept); used once, then replaced. One made by
    a refresh is derived from the token it replaces (user_sessions.py), and `access_scopes` are those of the
    access token issued beside it, so that a retry of that refresh can be answered with the same pair."""

    __tablename__ = "refresh_tokens"
    __table_args__ = (Index("ix_refresh_tokens_session_id", "session_id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    session_id: Mapped[str] = mapped_column(ForeignKey("user_sessions.id"))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    access_scopes: Mapped[list[str] | None] = mapped_column(JSONType)


class OAuthClient(Base):
    """An OAuth client registered by itself (RFC 7591, POST /oauth/register): an MCP client asking people
    of an organisation to let it act for them. A confidential client's secret is kept as SHA-256 only."""

    __tablename__ = "oauth_clients"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # the client_id
    client_name: Mapped[str | None] = mapped_column(String(200))
    redirect_uris: Mapped[list[str]] = mapped_column(JSONType, default=list)
    grant_types: Mapped[list[str]] = mapped_column(JSONType, default=list)
    scope: Mapped[str | None] = mapped_column(String(500))
    token_endpoint_auth_method: Mapped[str] = mapped_column(String(32))
    secret_hash: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class OAuthCode(Base):
    """An authorization code (SHA-256 only): single-use, short-lived, bound to its client, redirect URI,
    PKCE challenge, person, scopes and resource. `session_id` names the session its exchange opened, which
    a second exchange of the same code ends."""

    __tablename__ = "oauth_codes"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    client_id: Mapped[str] = mapped_column(ForeignKey("oauth_clients.id"), index=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"), index=True)
    redirect_uri: Mapped[str] = mapped_column(String(2000))
    code_challenge: Mapped[str] = mapped_column(String(128))
    scopes: Mapped[list[str]] = mapped_column(JSONType, default=list)
    resource: Mapped[str] = mapped_column(String(2000))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    session_id: Mapped[str | None] = mapped_column(String(36))
