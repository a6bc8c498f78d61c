"""The blob store: uploads are streamed to a temporary file under the blob directory with a size
limit, hashed on the way, then moved into place (content-addressed by document id)."""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

from domain.kernel.errors import DomainError


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
        tmp = blob_dir / "tmp"
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
        rel = Path("documents") / document_id[:2] / document_id
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
