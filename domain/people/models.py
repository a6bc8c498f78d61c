"""Staff: the people who keep the final word (curators and reviewers)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from domain.kernel.clock import new_id, utcnow
from domain.kernel.db import Base, UTCDateTime


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
    """A staff member signed in to the review pages (`domain/people/sessions.py`): the session token's
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
