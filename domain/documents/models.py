"""The document API: organisations, service keys, documents, share links, comments and the agents
working on a document (memberships; intents, constraints, salience and section locks live with the
consensus tables, shared with topics)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, false
from sqlalchemy.orm import Mapped, mapped_column

from domain.consensus.models import SectionLock as SectionLock  # the shared table, still importable here
from domain.kernel.clock import utcnow
from domain.kernel.db import Base, JSONType, UTCDateTime
from domain.kernel.ids import new_id
from domain.kernel.vocabulary import SpeltOut


class DocumentStatus(StrEnum):
    """A document's conversion: under way, done, or failed (the document then holds no text)."""

    PROCESSING = "processing"
    READY = "ready"
    FAILED = "failed"


DocumentStatusField = Annotated[DocumentStatus, SpeltOut(DocumentStatus)]


class Organisation(Base):
    __tablename__ = "organisations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(200))
    name_key: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ServiceKey(Base):
    """A `svc_sk_` key of an organisation; only its SHA-256 is kept."""

    __tablename__ = "service_keys"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    org_id: Mapped[str] = mapped_column(ForeignKey("organisations.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    key_prefix: Mapped[str] = mapped_column(String(20))
    scopes: Mapped[list[str]] = mapped_column(JSONType, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # A key minted by an invite's join (POST …/join-token) works on this one document's agent paths only.
    document_id: Mapped[str | None] = mapped_column(String(36))
    # The principal (a DID) the operator attested the key acts for when minting it (migration 0036); NULL:
    # the key's agents are their own principals.
    principal: Mapped[str | None] = mapped_column(String(255))


class Document(Base):
    __tablename__ = "documents"
    # The list's order (newest first, id breaking ties) read straight off the index, a page at a time.
    __table_args__ = (Index("ix_documents_org_created_id", "org_id", "created_at", "id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    org_id: Mapped[str] = mapped_column(ForeignKey("organisations.id"))
    owner_key_id: Mapped[str] = mapped_column(String(36))
    title: Mapped[str] = mapped_column(String(500))
    filename: Mapped[str | None] = mapped_column(String(500))
    kind: Mapped[str] = mapped_column(String(16))  # docx | pdf | html | markdown | text
    media_type: Mapped[str] = mapped_column(String(120))
    size_bytes: Mapped[int] = mapped_column(Integer, default=0)
    sha256: Mapped[str] = mapped_column(String(64))
    blob_path: Mapped[str] = mapped_column(String(500))
    tags: Mapped[list[str]] = mapped_column(JSONType, default=list)
    status: Mapped[str] = mapped_column(String(16), default=DocumentStatus.PROCESSING)
    error: Mapped[str | None] = mapped_column(Text)
    content: Mapped[str | None] = mapped_column(Text)
    version: Mapped[int] = mapped_column(Integer, default=0)
    conversion_ms: Mapped[int | None] = mapped_column(Integer)
    # A DOCX upload's sections → blocks of the original body (convert_docx._source_map; migration 0023).
    source_map: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # How proposals merge (domain/consensus/policies.py), set at upload and changed by the owner's key.
    approval_policy: Mapped[str] = mapped_column(
        String(24), default="concord-default", server_default="concord-default"
    )
    allow_self_approval: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class DocumentTag(Base):
    """One tag of a document, case-folded, beside the document's organisation and creation time: the
    tag filter of the document list reads this index in the list's order, so it pages in SQL. The
    document's `tags` keep the tags as uploaded (their order and case) for the responses; the two are
    written together (library.create), and a document's tags never change after upload."""

    __tablename__ = "document_tags"
    __table_args__ = (
        Index("ix_document_tags_org_tag_created", "org_id", "tag_key", "created_at", "document_id"),
    )

    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id"), primary_key=True)
    tag_key: Mapped[str] = mapped_column(String(200), primary_key=True)  # casefold() of a tag (<= 64 chars)
    org_id: Mapped[str] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ShareLink(Base):
    __tablename__ = "share_links"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id"), index=True)
    org_id: Mapped[str] = mapped_column(String(36))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    permission: Mapped[str] = mapped_column(String(16))
    access_mode: Mapped[str] = mapped_column(String(24))
    public: Mapped[bool] = mapped_column(Boolean, default=False)
    reviewer_emails: Mapped[list[str]] = mapped_column(JSONType, default=list)
    allowed_domain: Mapped[str | None] = mapped_column(String(253))
    created_by: Mapped[str] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revoked_by: Mapped[str | None] = mapped_column(String(36))


class ShareLinkCode(Base):
    """A one-time code mailed to prove an address for a closed share link; only a salted hash is kept."""

    __tablename__ = "share_link_codes"
    __table_args__ = (Index("ix_share_link_codes_link_email", "link_id", "email"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    link_id: Mapped[str] = mapped_column(ForeignKey("share_links.id"))
    email: Mapped[str] = mapped_column(String(254))
    code_hash: Mapped[str] = mapped_column(String(64))
    salt: Mapped[str] = mapped_column(String(32))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class ShareLinkSession(Base):
    """A browser's (or API client's) session on one share link: the cookie's SHA-256, and the address it
    proved (none yet, or none needed for an open or public link)."""

    __tablename__ = "share_link_sessions"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    link_id: Mapped[str] = mapped_column(ForeignKey("share_links.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    email: Mapped[str | None] = mapped_column(String(254))
    verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Comment(Base):
    __tablename__ = "document_comments"
    __table_args__ = (
        Index("ix_document_comments_doc_created", "document_id", "created_at"),
        # The organisation-wide comment search, in its order (oldest first, id breaking ties).
        Index("ix_document_comments_org_created_id", "org_id", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id"))
    org_id: Mapped[str] = mapped_column(String(36))
    text: Mapped[str] = mapped_column(Text)
    author: Mapped[str] = mapped_column(String(200))
    author_key_id: Mapped[str] = mapped_column(String(36))
    paragraph_id: Mapped[str | None] = mapped_column(String(256))
    # The document agent that wrote it on the PACT path (POST …/comments; migration 0032), else NULL.
    agent_id: Mapped[str | None] = mapped_column(String(36))
    resolved: Mapped[bool] = mapped_column(Boolean, default=False)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    resolved_by: Mapped[str | None] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class DocumentAgent(Base):
    """A service key's membership of a document (the key acts as this agent on that document)."""

    __tablename__ = "document_agents"
    __table_args__ = (Index("ix_document_agents_doc_key", "document_id", "key_id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id"))
    key_id: Mapped[str] = mapped_column(String(36))
    agent_name: Mapped[str] = mapped_column(String(128))
    role: Mapped[str] = mapped_column(String(16))
    capabilities: Mapped[list[str]] = mapped_column(JSONType, default=list)
    # The SHA-256 of the inviteToken given on join; the token itself is never kept (migration 0019).
    invite_token_hash: Mapped[str | None] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="active")  # active | left
    joined_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    left_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The agent's done signal (domain/consensus/completions.py; migration 0032), as a topic participant's.
    done_status: Mapped[str | None] = mapped_column(String(20))
    done_summary: Mapped[str | None] = mapped_column(Text)
    done_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
