"""Conversion in a bounded child process (issue 14): a document that needs more memory or CPU time than
the settings allow ends `failed` with a plain reason while the rest of the server (hub writes, other
conversions, the worker itself) goes on; DOCX bodies with XML comments, processing instructions and a
DOCTYPE convert; a converter's internal exception text never reaches a client."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import random
import re
import signal
import uuid
import zipfile
from pathlib import Path
from typing import Any

import aiohttp
import docx
import pytest

from tests.conftest import REDIS_URL, RUN_ID
from tests.documents_support import make_key, upload, upload_ready, wait_status
from tests.processes import command, conversion_children, free_port, ready, running, start, stop
from tests.waiting import eventually

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _word(heading: str = "Sandboxed", body: str = "Body text.") -> bytes:
    word = docx.Document()
    word.add_heading(heading, level=1)
    word.add_paragraph(body)
    out = io.BytesIO()
    word.save(out)
    return out.getvalue()


def _edit(data: bytes, edit: Any, *, stored: bool = False) -> bytes:
    """The DOCX with word/document.xml passed through `edit` (bytes → bytes)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "word/document.xml":
                body = edit(body)
                dst.writestr(info.filename, body, zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED)
            else:
                dst.writestr(info, body)
    return out.getvalue()


def _expanding_docx(paragraphs: int) -> bytes:
    """A DOCX of a few MB whose body is `paragraphs` short paragraphs of varied words: cheap to store,
    several hundred MB once parsed and converted (each paragraph becomes many objects on the way)."""
    rng = random.Random(14)
    words = [uuid.UUID(int=rng.getrandbits(128)).hex[:6] for _ in range(5000)]
    body = "".join(
        f"<w:p><w:r><w:t>{words[i % 5000]} {words[(i * 7) % 5000]}</w:t></w:r></w:p>"
        for i in range(paragraphs)
    ).encode()
    return _edit(_word(), lambda xml: xml.replace(b"<w:body>", b"<w:body>" + body, 1))


def _busy_html(elements: int) -> bytes:
    """An HTML page of `elements` nested-two-deep blocks: seconds of CPU time to convert."""
    cell = "<div><p><b>a</b> <i>b</i> <a href='#x'>c</a></p></div>"
    return ("<!doctype html><html><body><main>" + cell * elements + "</main></body></html>").encode()


async def test_a_document_over_the_memory_limit_fails_plainly_while_hub_writes_go_on(
    docs, hub, runtime, register, settings, monkeypatch
):
    monkeypatch.setattr(settings, "convert_memory_mb", 200)
    key = await make_key(runtime)
    agent = await register()
    bomb = _expanding_docx(400_000)
    assert len(bomb) < 8 * 1024 * 1024
    resp = await upload(docs, key, bomb, "big.docx")
    assert resp.status == 202, await resp.text()
    doc_id = (await resp.json())["id"]
    # Hub writes while the conversion runs: none waits on it, none answers 500 "database is locked".
    statuses = []
    while True:
        topic = {
            "title": f"Meanwhile {uuid.uuid4().hex[:8]}",
            "content": "# Meanwhile\n\nWritten while converting.\n",
            "tier": "empirical",
        }
        written = await hub.post("/api/pact/topics", headers=agent["headers"], json=topic)
        statuses.append(written.status)
        current = await (await docs.get(f"/api/documents/{doc_id}", headers=key["headers"])).json()
        if current["status"] != "processing" or len(statuses) >= 200:
            break
    assert set(statuses) == {201}, statuses
    doc = await wait_status(docs, key, doc_id, "failed")
    assert doc["error"] == "conversion exceeded the memory limit of 200 MB"
    # The worker is still there, and a normal document converts (with the limit still low).
    ready = await upload_ready(docs, key, _word("Still converting"), "ok.docx")
    resp = await docs.get(f"/api/tap/{ready['id']}/content", headers=key["headers"])
    assert "# Still converting" in (await resp.json())["content"]


async def test_a_document_over_the_cpu_time_limit_fails_plainly(docs, runtime, settings, monkeypatch):
    monkeypatch.setattr(settings, "convert_cpu_seconds", 1)
    key = await make_key(runtime)
    resp = await upload(docs, key, _busy_html(120_000), "busy.html")
    assert resp.status == 202, await resp.text()
    doc = await wait_status(docs, key, (await resp.json())["id"], "failed")
    assert doc["error"] == "conversion exceeded the CPU time limit of 1 second"
    resp = await docs.get(f"/api/tap/{doc['id']}/content", headers=key["headers"])
    assert resp.status == 422
    assert "CPU time limit" in (await resp.json())["detail"]
    ready = await upload_ready(
        docs, key, b"<html><body><h1>Small page</h1><p>Fine.</p></body></html>", "ok.html"
    )
    assert ready["status"] == "ready"


async def test_a_normal_document_converts_within_the_default_limits(docs, runtime, settings):
    assert settings.convert_memory_mb >= 512
    assert settings.convert_cpu_seconds >= 30
    key = await make_key(runtime)
    doc = await upload_ready(docs, key, _word("Quarterly plan", "Everything as usual."), "plan.docx")
    resp = await docs.get(f"/api/tap/{doc['id']}/content", headers=key["headers"])
    md = (await resp.json())["content"]
    assert "# Quarterly plan" in md
    assert "Everything as usual." in md


_MARKUP = {
    "comment": (
        lambda xml: xml.replace(b"<w:body>", b"<w:body><!-- hidden remark -->", 1).replace(
            b"<w:r>", b"<w:r><!-- inside a run -->", 1
        ),
        "Body text.",
    ),
    "processing instruction": (
        lambda xml: xml.replace(b"<w:body>", b"<w:body><?concord keep?>", 1).replace(
            b"<w:r>", b"<w:r><?mso-pi x?>", 1
        ),
        "Body text.",
    ),
    "doctype": (
        lambda xml: re.sub(
            rb"(<\?xml[^>]*\?>)", rb'\1<!DOCTYPE w:document [<!ENTITY co "Concord">]>', xml, count=1
        ).replace(b"Body text.", b"Body &co; text."),
        "Body Concord text.",
    ),
}


async def test_docx_bodies_with_comments_processing_instructions_and_a_doctype_convert(docs, runtime):
    key = await make_key(runtime)
    for what, (edit, body) in _MARKUP.items():
        data = _edit(_word(f"With a {what}", "Body text."), edit)
        resp = await upload(docs, key, data, f"{what}.docx")
        assert resp.status == 202, await resp.text()
        doc = await wait_status(docs, key, (await resp.json())["id"], "ready")
        resp = await docs.get(f"/api/tap/{doc['id']}/content", headers=key["headers"])
        md = (await resp.json())["content"]
        assert f"# With a {what}" in md, (what, md)
        assert body in md, (what, md)
        assert "hidden remark" not in md
        assert "inside a run" not in md
        assert "concord keep" not in md


async def test_failure_reasons_are_plain_sentences_never_exception_text(docs, runtime):
    key = await make_key(runtime)
    external = _edit(  # an external entity is never read: the file stays unread, the reason is plain
        _word("Entities", "Body text."),
        lambda xml: re.sub(
            rb"(<\?xml[^>]*\?>)",
            rb'\1<!DOCTYPE w:document [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
            xml,
            count=1,
        ).replace(b"Body text.", b"Body &x; text."),
    )
    # Parts mammoth cannot use: its ValueError ("invalid literal for int()") and KeyError ('rId999').
    bad_span = _edit(
        _word("Span", "Body"),
        lambda xml: xml.replace(
            b"<w:body>",
            b'<w:body><w:tbl><w:tr><w:tc><w:tcPr><w:gridSpan w:val="x"/></w:tcPr>'
            b"<w:p/></w:tc></w:tr></w:tbl>",
            1,
        ),
    )
    bad_link = _edit(
        _word("Link", "Body"),
        lambda xml: xml.replace(
            b"<w:body>",
            b'<w:body><w:p><w:hyperlink r:id="rId999"><w:r><w:t>x</w:t></w:r></w:hyperlink></w:p>',
            1,
        ),
    )
    for data in (external, bad_span, bad_link):
        resp = await upload(docs, key, data, "odd.docx")
        assert resp.status == 202, await resp.text()
        doc = await wait_status(docs, key, (await resp.json())["id"], "failed")
        assert doc["error"].startswith("corrupt DOCX: "), doc["error"]
        _assert_plain(doc["error"])
        assert "root:" not in doc["error"]
        resp = await docs.get(f"/api/tap/{doc['id']}/content", headers=key["headers"])
        assert resp.status == 422
        _assert_plain((await resp.json())["detail"])


def _assert_plain(reason: str) -> None:
    internal = r"\b[A-Z]\w*(Error|Exception)\b|Traceback|object has no attribute|invalid literal|'rId"
    assert not re.search(internal, reason), reason


# --- real processes: `concord serve` (embedded) and, on Redis, a `concord worker` group --------------------


async def _bounded_conversions_through(base: str, key: dict, proc: Any, log: Path) -> None:
    """Over HTTP against a running server: the expanding DOCX fails on the memory limit, a normal one
    uploaded at the same time converts, and the process doing the work is still running."""
    async with aiohttp.ClientSession() as http:

        async def post(data: bytes, name: str) -> str:
            form = aiohttp.FormData()
            form.add_field("file", data, filename=name, content_type="application/octet-stream")
            async with http.post(f"{base}/api/documents", data=form, headers=key["headers"]) as resp:
                assert resp.status == 202, await resp.text()
                return str((await resp.json())["id"])

        async def settled(doc_id: str) -> dict:
            async def check() -> dict | None:
                async with http.get(f"{base}/api/documents/{doc_id}", headers=key["headers"]) as resp:
                    body = await resp.json()
                return body if body["status"] != "processing" else None

            return await eventually(check, timeout=300)  # a bound for a loaded machine, not a speed check

        bomb = await post(_expanding_docx(400_000), "big.docx")
        fine = await post(_word("Converted by the worker"), "fine.docx")
        failed = await settled(bomb)
        assert failed["status"] == "failed", failed
        assert failed["error"] == "conversion exceeded the memory limit of 200 MB"
        ready = await settled(fine)
        assert ready["status"] == "ready", ready
    assert proc.poll() is None, await asyncio.to_thread(log.read_text)


@pytest.mark.slow
async def test_concord_serve_converts_in_bounded_children(runtime, tmp_path):
    await runtime.relay.stop()  # the test process shares the database: its relay must not take the jobs
    key = await make_key(runtime)
    hub_port, docs_port = free_port(), free_port()
    env = {
        "CONCORD_HUB_PORT": str(hub_port),
        "CONCORD_DOCS_PORT": str(docs_port),
        "CONCORD_REDIS_URL": "",  # the embedded broker and in-process workers, whatever the database
        "CONCORD_WEB_PROCESSES": "1",
        "CONCORD_CONVERT_MEMORY_MB": "200",
    }
    log = tmp_path / "serve.log"
    proc = start([command("concord"), "serve"], env, log)
    try:
        await ready(proc, log, f"http://127.0.0.1:{docs_port}", tries=1200)
        await _bounded_conversions_through(f"http://127.0.0.1:{docs_port}", key, proc, log)
    finally:
        code = stop(proc)
    text = await asyncio.to_thread(log.read_text)
    assert code == 0, text
    assert "Traceback" not in text, text[-4000:]


@pytest.mark.slow
@pytest.mark.skipif(not REDIS_URL, reason="production mode needs Redis (CONCORD_TEST_REDIS_URL)")
async def test_a_worker_group_converts_in_bounded_children(runtime, tmp_path):
    await runtime.relay.stop()
    key = await make_key(runtime)
    docs_port = free_port()
    env = {
        "CONCORD_HUB_PORT": str(free_port()),
        "CONCORD_DOCS_PORT": str(docs_port),
        # A namespace of their own, so the test process's worker cannot take the jobs.
        "CONCORD_QUEUE_NAMESPACE": f"concord-sandbox-{RUN_ID}",
        "CONCORD_WEB_PROCESSES": "1",
        "CONCORD_CONVERT_MEMORY_MB": "200",
    }
    web_log, worker_log = tmp_path / "web.log", tmp_path / "worker.log"
    web = start([command("concord"), "web"], env, web_log)
    worker = start([command("concord"), "worker", "--processes", "1", "--threads", "2"], env, worker_log)
    try:
        await ready(web, web_log, f"http://127.0.0.1:{docs_port}", tries=1200)
        await _bounded_conversions_through(f"http://127.0.0.1:{docs_port}", key, worker, worker_log)
    finally:
        web_code = stop(web)
        stop(worker)
    assert web_code == 0, await asyncio.to_thread(web_log.read_text)
    text = await asyncio.to_thread(worker_log.read_text)
    assert "Traceback" not in text, text[-4000:]


async def test_a_conversion_child_dies_with_its_worker(runtime, tmp_path):
    """A worker process killed during a long conversion (SIGKILL: an out-of-memory kill, a node lost) takes
    its conversion child with it, instead of leaving it converting, reparented to PID 1, until its CPU limit.
    `concord web` without Redis is the worker here (in-process worker threads), on either database."""
    await runtime.relay.stop()
    key = await make_key(runtime)
    docs_port = free_port()
    env = {
        "CONCORD_HUB_PORT": str(free_port()),
        "CONCORD_DOCS_PORT": str(docs_port),
        "CONCORD_REDIS_URL": "",
        "CONCORD_WEB_PROCESSES": "1",
    }
    base, log = f"http://127.0.0.1:{docs_port}", tmp_path / "web.log"
    proc = start([command("concord"), "web"], env, log)
    converting: list[int] = []
    try:
        await ready(proc, log, base, tries=1200)
        async with aiohttp.ClientSession() as http:
            form = aiohttp.FormData()
            # Over a minute of CPU time here: the child is still converting long after the kill.
            form.add_field("file", _busy_html(120_000), filename="long.html", content_type="text/html")
            async with http.post(f"{base}/api/documents", data=form, headers=key["headers"]) as resp:
                assert resp.status == 202, await resp.text()

        async def started() -> list[int]:
            return await asyncio.to_thread(conversion_children, proc.pid)

        converting = await eventually(started, timeout=120, interval=0.05)
        proc.kill()
        proc.wait()

        async def gone() -> bool:
            return not any([running(pid) for pid in converting])

        await eventually(gone, timeout=10, interval=0.1)
    finally:
        stop(proc)
        for pid in converting:  # without the fix, an orphan would burn a core until its CPU limit
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


async def test_a_conversion_whose_retries_run_out_fails_with_a_sentence(docs, runtime):
    from sqlalchemy import select, update

    from domain import wiring
    from domain.kernel import outbox
    from domain.kernel.models import OutboxJob

    await runtime.relay.stop()  # the job stays in the outbox: nothing converts it
    key = await make_key(runtime)
    resp = await upload(docs, key, _word(), "lost.docx")
    assert resp.status == 202, await resp.text()
    doc_id = (await resp.json())["id"]
    async with runtime.db.transaction() as session:
        job_id = await session.scalar(select(OutboxJob.id).where(OutboxJob.actor == "documents.convert"))
        await session.execute(
            update(OutboxJob)
            .where(OutboxJob.id == job_id)
            .values(last_error="FileNotFoundError: [Errno 2] /srv/concord/blobs/documents/ab/x")
        )
    await outbox.give_up(runtime.db, str(job_id), wiring.JOBS)  # what Dramatiq calls when retries run out
    doc = await wait_status(docs, key, doc_id, "failed")
    assert doc["error"].startswith("conversion kept failing"), doc["error"]
    assert "/srv" not in doc["error"]
    _assert_plain(doc["error"])
