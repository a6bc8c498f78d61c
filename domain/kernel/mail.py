"""Outgoing mail: through SMTP when `CONCORD_SMTP_URL` is set (stdlib smtplib, in a thread), otherwise
written as an .eml file under `<data_dir>/mail/` so that a local user can open it.

The SMTP server goes through the outbound guard like every outgoing connection: its host is resolved once,
each address checked, and the connection made to a checked address while TLS verifies the configured
name. It is the operator's own destination, so a mail relay on loopback or a private network is allowed
when its host is listed in `CONCORD_OUTBOUND_TRUSTED_HOSTS`."""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from domain.kernel import outbound
from domain.kernel.clock import utcnow
from domain.kernel.ids import new_id
from domain.kernel.settings import Settings

SCHEMES = {"smtp": 25, "smtp+starttls": 587, "smtps": 465}


def message(settings: Settings, to: str, subject: str, text: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = settings.mail_from
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = formatdate(utcnow().timestamp(), usegmt=True)
    msg["Message-ID"] = make_msgid(domain=settings.mail_from.rsplit("@", 1)[-1] or "localhost")
    msg.set_content(text)
    return msg


class MailError(Exception):
    """The mail could not be handed to the SMTP server (refused by the guard, or the server failed)."""


@dataclass(frozen=True)
class Server:
    scheme: str
    host: str
    port: int
    username: str | None
    password: str | None


def server(url: str) -> Server:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
        scheme = ""
    if scheme not in SCHEMES or not parts.hostname:
        # The URL is not repeated: it may hold the relay's password.
        raise MailError(
            "CONCORD_SMTP_URL must look like smtp://[user:password@]host:port (smtps://, smtp+starttls://)"
        )
    return Server(
        scheme=scheme,
        host=parts.hostname,
        port=port or SCHEMES[scheme],
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password or ""),
    )


class _PinnedSMTP(smtplib.SMTP):
    """Connects to the address the guard checked; STARTTLS still verifies the configured host name."""

    def __init__(self, address: str, host: str, port: int, timeout: float) -> None:
        self._address = address
        super().__init__(host, port, timeout=timeout)

    def connect(self, host: str = "", port: int = 0, source_address: Any = None) -> tuple[int, bytes]:
        return super().connect(self._address, port, source_address)  # the checked address, never `host`


class _PinnedSMTPSSL(smtplib.SMTP_SSL):
    """The same for smtps://: TLS from the start, SNI and certificate for the configured host name."""

    def __init__(self, address: str, host: str, port: int, timeout: float, context: ssl.SSLContext) -> None:
        self._address = address
        super().__init__(host, port, timeout=timeout, context=context)

    def connect(self, host: str = "", port: int = 0, source_address: Any = None) -> tuple[int, bytes]:
        return super().connect(self._address, port, source_address)  # the checked address, never `host`


def _connect(srv: Server, addresses: list[str]) -> smtplib.SMTP:
    failed: OSError | None = None
    for address in addresses:  # the next checked address only when connecting failed
        try:
            if srv.scheme == "smtps":
                context = ssl.create_default_context()
                return _PinnedSMTPSSL(address, srv.host, srv.port, 30, context)
            return _PinnedSMTP(address, srv.host, srv.port, 30)
        except OSError as exc:
            failed = exc
    assert failed is not None  # the guard never returns an empty list
    raise failed


def _smtp_send(srv: Server, addresses: list[str], msg: EmailMessage) -> None:
    with _connect(srv, addresses) as smtp:
        if srv.scheme == "smtp+starttls":
            smtp.starttls(context=ssl.create_default_context())
        if srv.username:
            smtp.login(srv.username, srv.password or "")
        smtp.send_message(msg)


def _write_file(directory: Path, msg: EmailMessage) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{utcnow().strftime('%Y%m%dT%H%M%S.%f')}-{new_id()}.eml"
    path.write_bytes(msg.as_bytes())
    return path


async def send(settings: Settings, to: str, subject: str, text: str) -> str:
    """Send one plain-text mail; returns where it went (the SMTP host or the file written)."""
    msg = message(settings, to, subject, text)
    if settings.smtp_url:
        srv = server(settings.smtp_url)
        try:
            addresses = await outbound.resolve(srv.host, srv.port, configured=True)
        except outbound.FetchError as exc:
            raise MailError(f"mail to the SMTP server refused: {exc.detail}") from None
        try:
            await asyncio.to_thread(_smtp_send, srv, addresses, msg)
        except (OSError, smtplib.SMTPException) as exc:
            raise MailError(f"the SMTP server {srv.host} failed: {exc}") from exc
        return srv.host
    return str(await asyncio.to_thread(_write_file, settings.mail_dir, msg))
