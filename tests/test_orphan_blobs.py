"""Orphaned blobs: a web process that dies between moving an upload into the blob store and committing its
document row (or in the middle of an upload) leaves a file no row names. The hourly sweep
`documents.purge_orphan_blobs` deletes such files once they are older than the grace period
(`CONCORD_ORPHAN_BLOB_GRACE_MINUTES`, 60), and never a file a document names or an upload in flight."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from sqlalchemy import select

from domain import wiring
from domain.documents import blobs, library
from domain.documents.models import Document
from domain.kernel import sweeps
from domain.kernel.clock import utcnow
from tests.documents_support import content, make_key, upload_ready

SWEEP = next(s for s in wiring.SWEEPS if s.name == "documents.purge_orphan_blobs")


def _crashed_upload(blob_dir: Path, data: bytes) -> Path:
    """What a process that died after the move and before the commit leaves behind."""
    writer = blobs.BlobWriter(blob_dir, 1 << 20)
    writer.write(data)
    return blob_dir / writer.commit(library.new_document_id())


def _staged_upload(blob_dir: Path, data: bytes) -> Path:
    """What a process that died mid-upload leaves behind (or an upload still streaming)."""
    writer = blobs.BlobWriter(blob_dir, 1 << 20)
    writer.write(data)
    writer.close()
    return writer.path


async def test_orphaned_blobs_are_deleted_after_the_grace_period(
    docs, runtime, clock, settings, monkeypatch, tmp_path
):
    # A blob directory of this test's own: the suite's other tests leave theirs in the shared one.
    monkeypatch.setattr(settings, "data_dir", tmp_path)
    blob_dir = runtime.settings.blob_dir
    assert blob_dir == tmp_path / "blobs"
    key = await make_key(runtime, org="Blob Org")
    doc = await upload_ready(docs, key, b"# Kept\n\nThe document's own blob.\n", "kept.md")
    async with runtime.db.read() as session:
        kept = blob_dir / (await session.scalar(select(Document.blob_path).where(Document.id == doc["id"])))
    assert kept.is_file()
    orphan = _crashed_upload(blob_dir, b"# Orphan\n")
    abandoned = _staged_upload(blob_dir, b"partial upl")

    # Within the grace period nothing goes: the files may belong to uploads still in flight.
    assert await sweeps.run(runtime.db, SWEEP, "test") == 0
    clock.advance(timedelta(minutes=59))
    assert await sweeps.run(runtime.db, SWEEP, "test") == 0
    assert orphan.is_file()
    assert abandoned.is_file()

    clock.advance(timedelta(minutes=2))
    # An upload still streaming was last written now (on the test's clock) and stays.
    in_flight = _staged_upload(blob_dir, b"streaming")
    now = utcnow().timestamp()
    os.utime(in_flight, (now, now))
    assert await sweeps.run(runtime.db, SWEEP, "test") == 2
    assert not orphan.exists()
    assert not abandoned.exists()
    assert in_flight.is_file()
    assert kept.is_file()
    # The document whose row names its blob is untouched and still reads.
    assert "The document's own blob." in await content(docs, key, doc["id"])
    resp = await docs.get(f"/api/documents/{doc['id']}/download", headers=key["headers"])
    assert resp.status == 200
    assert await sweeps.run(runtime.db, SWEEP, "test") == 0  # nothing left to delete
    in_flight.unlink()
