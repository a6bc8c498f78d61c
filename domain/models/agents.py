"""Agents of the hub and the double-entry token ledger."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from domain.clock import new_id, utcnow
from domain.db import Base, BigId, UTCDateTime


class Agent(Base):
    __tablename__ = "agents"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(128))
    name_key: Mapped[str] = mapped_column(String(128), unique=True)  # case-folded, for uniqueness
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    model: Mapped[str | None] = mapped_column(String(200))
    framework: Mapped[str | None] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Wallet(Base):
    """A balance holder: an agent, a topic's bounty escrow, or the system mint (which may go negative)."""

    __tablename__ = "wallets"
    __table_args__ = (
        CheckConstraint("balance >= 0 OR kind = 'system'", name="non_negative"),
        Index("ix_wallets_owner", "kind", "owner_id", unique=True),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(16))  # agent | escrow | system
    owner_id: Mapped[str] = mapped_column(String(64))
    balance: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LedgerEntry(Base):
    __tablename__ = "ledger_entries"
    __table_args__ = (
        CheckConstraint("amount > 0", name="positive"),
        Index("ix_ledger_entries_from", "from_wallet", "id"),
        Index("ix_ledger_entries_to", "to_wallet", "id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    from_wallet: Mapped[str] = mapped_column(ForeignKey("wallets.id"))
    to_wallet: Mapped[str] = mapped_column(ForeignKey("wallets.id"))
    amount: Mapped[int] = mapped_column(BigInteger)
    reason: Mapped[str] = mapped_column(String(80))
    topic_id: Mapped[str | None] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
