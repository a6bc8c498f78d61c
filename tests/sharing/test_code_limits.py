"""One-time codes of closed share links are limited per client address, per link and per mail domain, on
top of the limits per address (issue 29): one client asked codes for 40 addresses of the allowed domain in
0.9 s, and confirmations were not limited at all, so guessing across many addresses could open a link.
Every refusal is a 429 with Retry-After and a detail saying which budget is spent; the review page shows
the form again, saying so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sharing.conftest import code_from_dir, csrf_of


@pytest.fixture
def proxied(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Client addresses come from X-Forwarded-For, so a test can be many clients."""
    monkeypatch.setattr(settings, "trusted_proxy_header", "X-Forwarded-For")


def client(n: int) -> dict[str, str]:
    return {"X-Forwarded-For": f"198.51.100.{n}"}


def mails(mail_dir: Path) -> int:
    return len(list(mail_dir.glob("*.eml"))) if mail_dir.exists() else 0


async def ask(docs: Any, token: str, email: str, **headers: str) -> Any:
    return await docs.post(f"/api/share/{token}/verification", json={"email": email}, headers=headers)


async def confirm(docs: Any, token: str, email: str, code: str, **headers: str) -> Any:
    return await docs.post(
        f"/api/share/{token}/verification/confirm", json={"email": email, "code": code}, headers=headers
    )


async def refused(resp: Any, *words: str) -> dict[str, Any]:
    assert resp.status == 429, await resp.text()
    assert int(resp.headers["Retry-After"]) >= 1
    assert resp.content_type == "application/problem+json"
    problem = dict(await resp.json())
    assert problem["code"] == "rate_limited"
    for word in words:
        assert word in problem["detail"], problem
    return problem


def wrong(code: str) -> str:
    return "000000" if code != "000000" else "111111"


async def test_one_client_cannot_ask_codes_for_many_addresses(docs, shared, mail_dir):
    """The probe of the issue: 40 addresses of the allowed domain from one client."""
    link = await shared["link"](permission="FullReview", accessMode="closed-org", allowedDomain="acme.com")
    statuses = [(await ask(docs, link["token"], f"person{n}@acme.com")).status for n in range(40)]
    assert statuses == [202] * 5 + [429] * 35
    assert mails(mail_dir) == 5
    problem = await refused(await ask(docs, link["token"], "late@acme.com"), "from your address", "minute")
    assert problem["limit"] == "client"


async def test_a_link_takes_a_bounded_number_of_code_requests_from_all_clients(
    docs, shared, mail_dir, proxied
):
    link = await shared["link"](permission="FullReview", accessMode="closed-org", allowedDomain="acme.com")
    statuses = [
        (await ask(docs, link["token"], f"person{n}@acme.com", **client(n))).status for n in range(40)
    ]
    assert statuses == [202] * 30 + [429] * 10
    assert mails(mail_dir) == 30
    problem = await refused(
        await ask(docs, link["token"], "late@acme.com", **client(99)), "this share link", "hour"
    )
    assert problem["limit"] == "link"
    # Another link of the same document has its own budget.
    other = await shared["link"](permission="ReadOnly", accessMode="closed-org", allowedDomain="acme.com")
    assert (await ask(docs, other["token"], "person1@acme.com", **client(100))).status == 202


async def test_mail_to_one_domain_is_bounded_over_every_link(
    docs, shared, mail_dir, proxied, settings, monkeypatch
):
    monkeypatch.setattr(settings, "share_mail_per_domain_per_hour", 4)
    links = [
        await shared["link"](permission="ReadOnly", accessMode="closed-org", allowedDomain="acme.com")
        for _ in range(3)
    ]
    statuses = [
        (await ask(docs, links[n % 3]["token"], f"p{n}@acme.com", **client(n))).status for n in range(6)
    ]
    assert statuses == [202] * 4 + [429] * 2
    assert mails(mail_dir) == 4
    problem = await refused(await ask(docs, links[0]["token"], "x@acme.com", **client(50)), "acme.com")
    assert problem["limit"] == "domain"
    # Another domain is not affected.
    elsewhere = await shared["link"](
        permission="ReadOnly", accessMode="closed-individual", reviewerEmails=["ann@example.org"]
    )
    assert (await ask(docs, elsewhere["token"], "ann@example.org", **client(51))).status == 202


async def test_listed_and_unlisted_addresses_are_limited_alike(docs, shared, mail_dir, proxied):
    """A closed-individual link answers the same for an unlisted address: its limits too, so that a 429
    never tells who is on the list."""
    link = await shared["link"](
        permission="ReadOnly", accessMode="closed-individual", reviewerEmails=["ann@example.com"]
    )
    for email in ("ann@example.com", "eve@example.com"):
        statuses = [(await ask(docs, link["token"], email, **client(n))).status for n in range(7)]
        assert statuses == [202] * 5 + [429] * 2, email
        problem = await refused(await ask(docs, link["token"], email, **client(9)), "this address")
        assert problem["limit"] == "address"
    assert mails(mail_dir) == 5


async def test_confirmations_are_limited_per_client(docs, shared, mail_dir):
    link = await shared["link"](permission="ReadOnly", accessMode="closed-org", allowedDomain="acme.com")
    token = link["token"]
    assert (await ask(docs, token, "bob@acme.com")).status == 202
    code = code_from_dir(mail_dir, "bob@acme.com")
    for n in range(10):  # no live code for these: still confirmations
        assert (await confirm(docs, token, f"nobody{n}@acme.com", code)).status == 403
    problem = await refused(await confirm(docs, token, "bob@acme.com", code), "from your address")
    assert problem["limit"] == "client"


async def test_wrong_codes_across_addresses_and_clients_spend_the_links_budget(
    docs, shared, mail_dir, proxied, caplog
):
    """Guessing across many addresses from many clients: 5 attempts per code and 5 codes per address do not
    bound it, the link's budget of wrong codes does, and then even the right code waits."""
    link = await shared["link"](permission="FullReview", accessMode="closed-org", allowedDomain="acme.com")
    token = link["token"]
    codes = {}
    for n in range(5):
        email = f"guess{n}@acme.com"
        assert (await ask(docs, token, email, **client(n))).status == 202
        codes[email] = code_from_dir(mail_dir, email)
    statuses = []
    for n in range(22):
        email = f"guess{n % 5}@acme.com"
        # A fresh client for each guess, and never more than 4 wrong ones on a code.
        resp = await confirm(docs, token, email, wrong(codes[email]), **client(100 + n))
        statuses.append(resp.status)
        if n % 5 == 4 and n < 15:  # new codes before the attempts run out
            for m in range(5):
                e = f"guess{m}@acme.com"
                await ask(docs, token, e, **client(200 + n * 5 + m))
                codes[e] = code_from_dir(mail_dir, e)
    assert statuses == [403] * 20 + [429] * 2
    email = "guess0@acme.com"
    problem = await refused(
        await confirm(docs, token, email, codes[email], **client(250)), "wrong codes", "this share link"
    )
    assert problem["limit"] == "link"
    assert any("wrong codes" in r.getMessage() and link["id"] in r.getMessage() for r in caplog.records)
    # Nobody got in.
    assert (await docs.get(f"/api/share/{token}")).status == 403


async def test_the_review_page_says_what_to_wait_for(docs, shared, mail_dir):
    link = await shared["link"](permission="CommentOnly", accessMode="closed-org", allowedDomain="acme.com")
    base = f"/share/{link['token']}"
    page = await (await docs.get(base)).text()
    csrf = csrf_of(page)
    for n in range(5):
        resp = await docs.post(f"{base}/verify", data={"email": f"p{n}@acme.com", "csrf": csrf})
        assert resp.status == 200, await resp.text()
    resp = await docs.post(f"{base}/verify", data={"email": "p9@acme.com", "csrf": csrf})
    assert resp.status == 429
    assert resp.content_type == "text/html"
    assert int(resp.headers["Retry-After"]) >= 1
    text = await resp.text()
    assert "Too many codes were asked from your address" in text
    assert 'type="email"' in text  # the form again
    assert "rate_limited" not in text

    for _ in range(10):
        resp = await docs.post(
            f"{base}/code",
            data={"email": "p0@acme.com", "code": "12345x", "csrf": csrf},
            allow_redirects=False,
        )
        assert resp.status in (400, 403), await resp.text()
    resp = await docs.post(
        f"{base}/code", data={"email": "p0@acme.com", "code": "123456", "csrf": csrf}, allow_redirects=False
    )
    assert resp.status == 429
    assert int(resp.headers["Retry-After"]) >= 1
    text = await resp.text()
    assert "Too many codes were tried from your address" in text
    assert 'name="code"' in text


async def test_the_links_budget_holds_across_web_processes(
    aiohttp_client, runtime, shared, mail_dir, proxied, settings, monkeypatch, tmp_path
):
    """Two web processes count together: in Redis when there is one, else in the machine's shared file
    (as `concord serve --processes N` gives them)."""
    from web.app import create_docs_app
    from web.kernel.appkeys import RATE_LIMITS
    from web.kernel.ratelimit import RateLimits

    monkeypatch.setattr(settings, "share_link_codes_per_hour", 4)
    processes = []
    for _ in range(2):
        app = create_docs_app(runtime)
        if not settings.redis_url:
            app[RATE_LIMITS] = RateLimits(settings, tmp_path / "rate-limits.sqlite")
        processes.append(await aiohttp_client(app))
    link = await shared["link"](permission="ReadOnly", accessMode="closed-org", allowedDomain="acme.com")
    statuses = [
        (await ask(processes[n % 2], link["token"], f"p{n}@acme.com", **client(n))).status for n in range(6)
    ]
    assert statuses == [202] * 4 + [429] * 2


async def test_a_wrong_code_says_nothing_of_who_is_on_the_list(docs, shared, mail_dir, proxied):
    """A closed-individual link's refusal of a code is the same for a listed address holding a live code
    and for an unlisted one (which never gets a code): otherwise asking a code and confirming a wrong one
    would tell anyone whether an address is on the reviewer list."""
    link = await shared["link"](
        permission="ReadOnly", accessMode="closed-individual", reviewerEmails=["ann@example.com"]
    )
    answers = []
    for n, email in enumerate(("ann@example.com", "eve@example.com")):
        assert (await ask(docs, link["token"], email, **client(n))).status == 202
        guess = wrong(code_from_dir(mail_dir, "ann@example.com"))  # wrong for Ann; Eve has no code at all
        resp = await confirm(docs, link["token"], email, guess, **client(n))
        body = dict(await resp.json())
        answers.append((resp.status, {k: v for k, v in body.items() if k not in ("instance", "requestId")}))
    assert mails(mail_dir) == 1  # only the listed address got a code
    assert answers[0] == answers[1]
    assert answers[0][0] == 403
