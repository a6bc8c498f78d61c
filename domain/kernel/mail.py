"""Outgoing mail: through SMTP when `CONCORD_SMTP_URL` is set (stdlib smtplib, in a thread), otherwise
written as an .eml file under `<data_dir>/mail/` so that a local user can open it."""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from urllib.parse import unquote, urlsplit

from domain.kernel.clock import new_id, utcnow
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


def _smtp_send(url: str, msg: EmailMessage) -> None:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES or not parts.hostname:
        raise ValueError(f"CONCORD_SMTP_URL must look like smtp://host:port, not {url!r}")
    port = parts.port or SCHEMES[scheme]
    smtp: smtplib.SMTP
    if scheme == "smtps":
        smtp = smtplib.SMTP_SSL(parts.hostname, port, timeout=30, context=ssl.create_default_context())
    else:
        smtp = smtplib.SMTP(parts.hostname, port, timeout=30)
    with smtp:
        if scheme == "smtp+starttls":
            smtp.starttls(context=ssl.create_default_context())
        if parts.username:
            smtp.login(unquote(parts.username), unquote(parts.password or ""))
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
        await asyncio.to_thread(_smtp_send, settings.smtp_url, msg)
        return urlsplit(settings.smtp_url).hostname or "smtp"
    return str(await asyncio.to_thread(_write_file, settings.mail_dir, msg))
