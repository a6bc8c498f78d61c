"""JSON POSTs to the escalation webhook (`CONCORD_ESCALATION_WEBHOOK_URL`) through the outbound guard.

The URL is the operator's, so its host may be on a private address when listed in
`CONCORD_OUTBOUND_TRUSTED_HOSTS`; redirects are not followed (as GitHub's and Stripe's webhooks do not):
a receiver that moved is configured with its new URL, and an answer cannot steer the POST elsewhere.
A URL the guard refuses, or that redirects, is `Refused`: retrying the same settings cannot help."""

from __future__ import annotations

import json
from typing import Any

from domain.kernel import outbound

LIMITS = outbound.Limits(
    timeout_seconds=10.0, max_bytes=65_536, max_redirects=0, user_agent="Concord escalation notifier"
)


REFUSED = outbound.REFUSED | {"redirect_limit"}


class Refused(Exception):
    """The webhook as configured may not be contacted (a non-http(s) URL, a non-public address) or
    redirects: no retry can help, only a change of settings."""


class DeliveryFailed(Exception):
    """This attempt failed (no answer, an error status); a retry may succeed."""


async def post_json(url: str, body: dict[str, Any], *, idempotency_key: str | None = None) -> None:
    """POST `body`; `idempotency_key` (sent as `Idempotency-Key`) is the same on every attempt of one
    notification, so a receiver can tell a retry from a new notification."""
    headers = {"Content-Type": "application/json"}
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    try:
        answer = await outbound.request(
            "POST",
            url,
            limits=LIMITS,
            headers=headers,
            content=json.dumps(body).encode(),
            read_body=False,
            configured=True,
        )
    except outbound.FetchError as exc:
        if exc.kind in REFUSED:
            raise Refused(f"webhook refused: {exc.detail}") from None
        raise DeliveryFailed(f"webhook delivery failed: {exc.detail}") from None
    if not 200 <= answer.status < 300:
        raise DeliveryFailed(f"webhook answered {answer.status}")
