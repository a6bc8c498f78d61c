"""Fixtures of the share-link tests: a document with a share link, a local SMTP server (aiosmtpd) and
the page's forms read back from its HTML."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from email import message_from_bytes
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from tests.documents_support import make_key, upload_ready

MD = (
    b"# Plan\n\nIntro with <script>alert(1)</script> and **bold**.\n\n## Budget\n\nMoney.\n\n"
    b"| Item | Cost |\n|---|---|\n| Desk | 100 |\n\n## Risks\n\nMany.\n"
)


@pytest.fixture
def mail_dir(settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Mail goes to files under a fresh data dir (no SMTP URL)."""
    monkeypatch.setattr(settings, "data_dir", tmp_path)
    monkeypatch.setattr(settings, "smtp_url", None)
    return tmp_path / "mail"


class Inbox:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        self.messages.append(message_from_bytes(envelope.content))
        return "250 OK"

    def code_for(self, email: str) -> str:
        for msg in reversed(self.messages):
            if msg["To"] == email:
                return code_in(msg.get_payload(decode=True).decode())
        raise AssertionError(f"no mail to {email}")


@pytest.fixture
def smtp(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Inbox]:
    """A local SMTP server; CONCORD_SMTP_URL points at it for the test."""
    from aiosmtpd.controller import Controller

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    monkeypatch.setattr(settings, "smtp_url", f"smtp://127.0.0.1:{port}")
    monkeypatch.setattr(settings, "outbound_trusted_hosts", ["127.0.0.1"])  # the operator's own relay
    yield inbox
    controller.stop()


def code_in(text: str) -> str:
    found = re.search(r"\b(\d{6})\b", text)
    assert found, text
    return found.group(1)


def code_from_dir(directory: Path, email: str) -> str:
    for path in sorted(directory.glob("*.eml"), reverse=True):
        msg = message_from_bytes(path.read_bytes())
        if msg["To"] == email:
            return code_in(str(msg.get_payload(decode=True), "utf-8"))  # type: ignore[arg-type]
    raise AssertionError(f"no mail to {email} in {directory}")


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page
    return unescape(found.group(1))


@pytest.fixture
async def shared(docs: Any, runtime: Any) -> dict[str, Any]:
    owner = await make_key(runtime, org="Acme", name="Owner")
    doc = await upload_ready(docs, owner, MD, "plan.md")

    async def link(**body: Any) -> dict[str, Any]:
        resp = await docs.post(f"/api/documents/{doc['id']}/share-link", headers=owner["headers"], json=body)
        assert resp.status == 201, await resp.text()
        return dict(await resp.json())

    return {"owner": owner, "doc": doc, "link": link}
