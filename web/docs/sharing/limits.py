"""The limits on one-time codes of closed share links, counted where every web process sees them (the app's
rate limits: Redis, else the machine's shared file).

Asking a code is limited per client address (a minute), per link and address (an hour, as the domain's
own count does), per link (an hour) and per mail domain over every link (an hour: the mail a domain can be
sent). Each is counted before the address is looked at, so a closed-individual link answers a listed and
an unlisted address alike, 429s included. Confirming is limited per client address (a minute) and by the
link's budget of wrong codes (an hour), which bounds guessing across any number of addresses and clients:
it is checked before a confirmation and spent by each refused one. Every refusal is a 429 naming the budget
(`limit`: client, address, link or domain) with Retry-After."""

from __future__ import annotations

import logging

from aiohttp import web

from domain.documents import sharing
from domain.documents.models import ShareLink
from domain.kernel.errors import RateLimited
from web.kernel.request import client_address, rate_limits, runtime

log = logging.getLogger("concord.sharing")

HOUR = 3600
MINUTE = 60


def _wait(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} seconds"
    return f"{-(-seconds // 60)} minutes"


async def _spend(
    request: web.Request,
    name: str,
    limit: int,
    key: str,
    *,
    seconds: int,
    what: str,
    budget: str,
    count: bool = True,
) -> None:
    limits = rate_limits(request)
    try:
        if count:
            await limits.hit(name, limit, key, seconds=seconds)
        else:
            await limits.check(name, limit, key, seconds=seconds)
    except RateLimited as exc:
        per = "a minute" if seconds == MINUTE else "an hour"
        raise RateLimited(
            f"{what}: at most {limit} {per}. Try again in {_wait(exc.retry_after)}.",
            retry_after=exc.retry_after,
            limit=budget,
        ) from None


async def before_code_request(request: web.Request) -> None:
    """Per client address, before anything is read."""
    await _spend(
        request,
        "share-code-client",
        runtime(request).settings.rate_limit_share_codes,
        client_address(request),
        seconds=MINUTE,
        what="Too many codes were asked from your address",
        budget="client",
    )


async def code_request(request: web.Request, link: ShareLink, email: str) -> None:
    """Per link and address, per link, per mail domain: for every valid address, admitted or not."""
    settings = runtime(request).settings
    domain = email.rsplit("@", 1)[1]
    await _spend(
        request,
        "share-code-address",
        sharing.CODES_PER_HOUR,
        f"{link.id}:{email}",
        seconds=HOUR,
        what="Too many codes were asked for this address on this share link",
        budget="address",
    )
    await _spend(
        request,
        "share-code-link",
        settings.share_link_codes_per_hour,
        link.id,
        seconds=HOUR,
        what="Too many codes were asked on this share link",
        budget="link",
    )
    await _spend(
        request,
        "share-code-domain",
        settings.share_mail_per_domain_per_hour,
        domain,
        seconds=HOUR,
        what=f"Too many codes were asked for addresses at {domain}",
        budget="domain",
    )


async def before_confirm(request: web.Request, link: ShareLink) -> None:
    """Per client address (counted), and the link's budget of wrong codes (not spent here)."""
    settings = runtime(request).settings
    await _spend(
        request,
        "share-confirm-client",
        settings.rate_limit_share_confirms,
        client_address(request),
        seconds=MINUTE,
        what="Too many codes were tried from your address",
        budget="client",
    )
    await _spend(
        request,
        "share-wrong-code-link",
        settings.share_link_wrong_codes_per_hour,
        link.id,
        seconds=HOUR,
        what="Too many wrong codes were tried on this share link",
        budget="link",
        count=False,
    )


async def wrong_code(request: web.Request, link: ShareLink) -> None:
    """A refused confirmation spends the link's budget; the one that uses it up is logged (someone may be
    guessing: the owner can revoke the link and make another)."""
    limit = runtime(request).settings.share_link_wrong_codes_per_hour
    try:
        await rate_limits(request).hit("share-wrong-code-link", limit, link.id, seconds=HOUR)
        await rate_limits(request).check("share-wrong-code-link", limit, link.id, seconds=HOUR)
    except RateLimited:
        log.warning(
            "share link %s (document %s): %d wrong codes in the last hour; confirmations refused until "
            "they age out",
            link.id,
            link.document_id,
            limit,
        )
