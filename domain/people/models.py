"""Staff: the people who keep the final word (curators and reviewers)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
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
