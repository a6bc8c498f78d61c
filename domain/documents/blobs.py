"""The blob store: uploads are streamed to a temporary file under the blob directory with a size
limit, hashed on the way, then moved into place (content-addressed by document id).

The file is moved into place before the document row is committed, so a web process that dies between
the two leaves a blob no row names (and one that dies mid-upload leaves its temporary file). The hourly
sweep `purge_orphans` deletes such files once they are older than `CONCORD_ORPHAN_BLOB_GRACE_MINUTES`,
so an upload still in flight, whose file is younger, is never touched."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from itertools import islice
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.documents.models import Document
from domain.kernel.clock import utcnow
from domain.kernel.errors import DomainError
from domain.kernel.settings import get_settings

log = logging.getLogger("concord.blobs")
# Where committed uploads live under the blob directory, and where uploads are staged.
DOCUMENTS = "documents"
STAGING = "tmp"


class PayloadTooLarge(DomainError):
    status = 413
    code = "payload_too_large"


class UnsupportedMediaType(DomainError):
    status = 415
    code = "unsupported_media_type"


class BlobWriter:
    def __init__(self, blob_dir: Path, limit: int) -> None:
        self.blob_dir = blob_dir
        self.limit = limit
        tmp = blob_dir / STAGING
        tmp.mkdir(parents=True, exist_ok=True)
        self.path = tmp / f"upload-{uuid.uuid4().hex}"
        self._fh = self.path.open("wb")
        self._sha = hashlib.sha256()
        self.size = 0

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            self.discard()
            raise PayloadTooLarge(
                f"file is larger than the {self.limit} bytes allowed (CONCORD_MAX_UPLOAD_BYTES)", field="file"
            )
        self._sha.update(chunk)
        self._fh.write(chunk)

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    @property
    def sha256(self) -> str:
        return self._sha.hexdigest()

    def discard(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)

    def commit(self, document_id: str) -> str:
        """Move the upload into place; returns the path relative to the blob directory."""
        self.close()
        rel = Path(DOCUMENTS) / document_id[:2] / document_id
        dest = self.blob_dir / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.path, dest)
        return rel.as_posix()


def path_of(blob_dir: Path, rel: str) -> Path:
    """Where a stored blob is (never outside the blob directory)."""
    path = (blob_dir / rel).resolve()
    if blob_dir.resolve() not in path.parents:
        raise ValueError("blob path escapes the blob directory")
    return path


def read(blob_dir: Path, rel: str) -> bytes:
    return path_of(blob_dir, rel).read_bytes()


def _older_files(root: Path, cutoff: float) -> Iterator[Path]:
    if not root.is_dir():
        return
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            try:
                if path.stat().st_mtime < cutoff:
                    yield path
            except FileNotFoundError:  # removed meanwhile (another sweep, a discarded upload)
                continue


def _unlink(paths: list[Path]) -> int:
    removed = 0
    for path in paths:
        try:
            path.unlink()
            removed += 1
        except FileNotFoundError:
            continue
    return removed


async def purge_orphans(session: AsyncSession) -> int:
    """Delete blobs that no document row names and staged uploads nobody finished, once they are older
    than the grace period; returns how many files were deleted."""
    settings = get_settings()
    blob_dir = settings.blob_dir
    cutoff = utcnow() - timedelta(minutes=settings.orphan_blob_grace_minutes)
    return await purge_orphans_before(session, blob_dir, cutoff)


async def purge_orphans_before(session: AsyncSession, blob_dir: Path, cutoff: datetime) -> int:
    stamp = cutoff.timestamp()
    staged = await asyncio.to_thread(lambda: list(_older_files(blob_dir / STAGING, stamp)))
    removed = await asyncio.to_thread(_unlink, staged)
    candidates = await asyncio.to_thread(lambda: list(_older_files(blob_dir / DOCUMENTS, stamp)))
    orphans: list[Path] = []
    it = iter(candidates)
    while batch := list(islice(it, 500)):
        by_rel = {path.relative_to(blob_dir).as_posix(): path for path in batch}
        named = set(await session.scalars(select(Document.blob_path).where(Document.blob_path.in_(by_rel))))
        orphans.extend(path for rel, path in by_rel.items() if rel not in named)
    removed += await asyncio.to_thread(_unlink, orphans)
    if removed:
        log.info("deleted %d orphaned blob(s) under %s", removed, blob_dir)
    return removed
