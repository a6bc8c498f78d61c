"""The destinations the operator configures go through the outbound guard too: the escalation webhook (for
escalations and for their answers) and the SMTP server. They may be on loopback or private addresses only
when their host is listed in CONCORD_OUTBOUND_TRUSTED_HOSTS; a webhook never follows a redirect; a
non-http(s) webhook URL is refused plainly."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from sqlalchemy import select

from domain.consensus.models import Escalation
from domain.kernel import mail
from domain.kernel.models import OutboxJob
from tests.axiom_helpers import staff_headers
from tests.waiting import eventually


class Receiver:
    """A reviewers' service on loopback: /hook records what it is posted, /moved redirects to /hook."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.moved = 0
        self.server: Any = None

    async def hook(self, request: web.Request) -> web.Response:
        self.calls.append(await request.json())
        return web.Response(status=204)

    async def move(self, request: web.Request) -> web.Response:
        self.moved += 1
        raise web.HTTPTemporaryRedirect("/hook")

    def url(self, path: str) -> str:
        return str(self.server.make_url(path))


@pytest.fixture
async def receiver(aiohttp_server: Any) -> Receiver:
    hook = Receiver()
    app = web.Application()
    app.router.add_post("/hook", hook.hook)
    app.router.add_post("/moved", hook.move)
    hook.server = await aiohttp_server(app)
    return hook


async def escalate(hub: Any, register: Any, message: str = "Is this still right?") -> str:
    agent = await register()
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={
            "title": f"Guarded webhook: {message}",
            "content": "# Answer\n\nText here.\n",
            "tier": "empirical",
        },
    )
    assert resp.status == 201, await resp.text()
    topic_id = (await resp.json())["id"]
    resp = await hub.post(
        f"/api/pact/{topic_id}/escalate", headers=agent["headers"], json={"message": message}
    )
    assert resp.status == 201, await resp.text()
    return str((await resp.json())["escalationId"])


async def settled(runtime: Any, escalation_id: str) -> Escalation:
    async def done() -> Escalation | None:
        async with runtime.db.read() as session:
            esc = await session.get(Escalation, escalation_id)
        return esc if esc is not None and esc.delivery_status != "pending" else None

    return await eventually(done, timeout=30)


async def test_a_webhook_on_loopback_is_refused_at_once_unless_its_host_is_trusted(
    hub, register, runtime, receiver, settings, monkeypatch
):
    monkeypatch.setattr(settings, "escalation_webhook_url", receiver.url("/hook"))
    esc = await settled(runtime, await escalate(hub, register))
    assert (esc.delivery_status, esc.delivery_attempts) == ("failed", 1)  # not retried: settings must change
    assert esc.delivery_error == (
        "webhook refused: the URL's host is non-public address 127.0.0.1 (loopback); if it is your own "
        "service, list 127.0.0.1 in CONCORD_OUTBOUND_TRUSTED_HOSTS"
    )
    assert receiver.calls == []

    monkeypatch.setattr(settings, "outbound_trusted_hosts", ["127.0.0.1"])
    esc = await settled(runtime, await escalate(hub, register, "Now?"))
    assert esc.delivery_status == "delivered"
    assert [c["escalation"]["message"] for c in receiver.calls] == ["Now?"]


async def test_a_webhook_that_redirects_is_not_followed(
    hub, register, runtime, receiver, settings, monkeypatch
):
    monkeypatch.setattr(settings, "escalation_webhook_url", receiver.url("/moved"))
    monkeypatch.setattr(settings, "outbound_trusted_hosts", ["127.0.0.1"])
    esc = await settled(runtime, await escalate(hub, register))
    assert (esc.delivery_status, esc.delivery_attempts) == ("failed", 1)
    assert "answered 307 redirecting to /hook; redirects are not followed here" in (esc.delivery_error or "")
    assert (receiver.moved, receiver.calls) == (1, [])


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("file:///etc/passwd", "webhook refused: only http and https URLs are contacted, not file:"),
        ("ftp://reviews.example/hook", "webhook refused: only http and https URLs are contacted, not ftp:"),
        ("http://[64:ff9b::7f00:1]/hook", "NAT64 form of 127.0.0.1, loopback"),
    ],
)
async def test_a_webhook_url_the_guard_refuses_fails_plainly(
    hub, register, runtime, settings, monkeypatch, url, said
):
    monkeypatch.setattr(settings, "escalation_webhook_url", url)
    esc = await settled(runtime, await escalate(hub, register))
    assert esc.delivery_status == "failed"
    assert said in (esc.delivery_error or "")


async def test_a_trusted_webhook_name_is_connected_at_the_address_checked(
    hub, register, runtime, receiver, dns, settings, monkeypatch
):
    dns.set("reviews.internal", ["127.0.0.1"], ["127.0.0.2"])  # a second lookup would find nobody
    monkeypatch.setattr(
        settings, "escalation_webhook_url", f"http://reviews.internal:{receiver.server.port}/hook"
    )
    monkeypatch.setattr(settings, "outbound_trusted_hosts", ["Reviews.Internal."])
    esc = await settled(runtime, await escalate(hub, register))
    assert esc.delivery_status == "delivered"
    assert len(receiver.calls) == 1
    assert dns.asked["reviews.internal"] == 1


async def test_the_answer_webhook_is_guarded_too(
    hub, register, runtime, receiver, settings, monkeypatch, caplog
):
    monkeypatch.setattr(settings, "escalation_webhook_url", receiver.url("/hook"))
    escalation_id = await escalate(hub, register)
    reviewer = await staff_headers(runtime, "Rey Reviewer", roles=("reviewer",))
    caplog.set_level(logging.WARNING, logger="concord.review")
    resp = await hub.post(
        f"/api/review/escalations/{escalation_id}/answer", headers=reviewer, json={"answer": "Yes."}
    )
    assert resp.status == 200, await resp.text()

    async def answer_job_done() -> OutboxJob | None:
        async with runtime.db.read() as session:
            job = await session.scalar(select(OutboxJob).where(OutboxJob.actor == "review.answer_notify"))
        return job if job is not None and job.status in ("done", "failed") else None

    job = await eventually(answer_job_done, timeout=30)
    assert (job.status, job.attempts) == ("done", 1)  # not retried: only a change of settings helps
    assert (
        f"answer to escalation {escalation_id} not posted: webhook refused: the URL's host is non-public "
        "address 127.0.0.1 (loopback)"
    ) in caplog.text
    assert receiver.calls == []


class Inbox:
    def __init__(self) -> None:
        self.messages: list[bytes] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's name
        self.messages.append(envelope.content)
        return "250 OK"


@pytest.fixture
def relay() -> Iterator[tuple[Inbox, int]]:
    """A mail relay on loopback (aiosmtpd)."""
    from aiosmtpd.controller import Controller

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield inbox, port
    controller.stop()


async def test_mail_to_a_relay_on_loopback_is_refused_unless_its_host_is_trusted(
    relay, settings, monkeypatch
):
    inbox, port = relay
    monkeypatch.setattr(settings, "smtp_url", f"smtp://127.0.0.1:{port}")
    with pytest.raises(mail.MailError) as info:
        await mail.send(settings, "ann@example.com", "Your code", "123456")
    assert str(info.value) == (
        "mail to the SMTP server refused: the URL's host is non-public address 127.0.0.1 (loopback); if it "
        "is your own service, list 127.0.0.1 in CONCORD_OUTBOUND_TRUSTED_HOSTS"
    )
    assert inbox.messages == []
    monkeypatch.setattr(settings, "outbound_trusted_hosts", ["127.0.0.1"])
    assert await mail.send(settings, "ann@example.com", "Your code", "123456") == "127.0.0.1"
    assert len(inbox.messages) == 1


async def test_mail_goes_to_the_checked_address_of_a_trusted_relay(relay, dns, settings, monkeypatch):
    inbox, port = relay
    dns.set("mail.internal", ["127.0.0.1"], ["127.0.0.2"])  # a second lookup would find nobody
    monkeypatch.setattr(settings, "smtp_url", f"smtp://mail.internal:{port}")
    monkeypatch.setattr(settings, "outbound_trusted_hosts", ["mail.internal"])
    assert await mail.send(settings, "ann@example.com", "Your code", "123456") == "mail.internal"
    assert len(inbox.messages) == 1
    assert dns.asked["mail.internal"] == 1


@pytest.mark.parametrize(
    "url", ["http://mail.example/", "file:///var/mail", "smtp://user:s3cret@mail.example:bad"]
)
async def test_an_smtp_url_of_another_kind_is_refused_plainly_without_repeating_it(
    settings, monkeypatch, url
):
    monkeypatch.setattr(settings, "smtp_url", url)
    with pytest.raises(mail.MailError) as info:
        await mail.send(settings, "ann@example.com", "Your code", "123456")
    assert str(info.value).startswith("CONCORD_SMTP_URL must look like smtp://")
    assert "s3cret" not in str(info.value)
