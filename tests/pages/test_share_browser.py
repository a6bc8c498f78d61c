"""Share links in a real headless Chromium, as a reviewer from outside the organisation uses them: a
CommentOnly link opens the document and takes a comment; a closed-individual link shows nothing of the
document until the address is proven with the code the mail carried."""

from __future__ import annotations

import asyncio
from email import message_from_bytes
from pathlib import Path
from typing import Any

import pytest

from tests.documents_support import make_key, upload_ready
from tests.pages.test_review_browser import shot
from tests.sharing.conftest import MD, code_in


@pytest.fixture
async def live_docs(aiohttp_server: Any, runtime: Any) -> Any:
    """The document app on a real loopback port, for a browser."""
    from web.app import create_docs_app

    return await aiohttp_server(create_docs_app(runtime))


async def share(docs: Any, runtime: Any, **body: Any) -> dict[str, Any]:
    owner = await make_key(runtime, org="Acme", name="Owner")
    doc = await upload_ready(docs, owner, MD, "plan.md")
    resp = await docs.post(f"/api/documents/{doc['id']}/share-link", headers=owner["headers"], json=body)
    assert resp.status == 201, await resp.text()
    return dict(await resp.json())


async def test_an_outside_reviewer_comments_through_a_comment_only_link(browser, live_docs, docs, runtime):
    page, base = browser, str(live_docs.make_url("")).rstrip("/")
    link = await share(docs, runtime, permission="CommentOnly", accessMode="open")
    await page.goto(f"{base}/share/{link['token']}")
    main = page.locator("#document")
    assert "Money." in await main.inner_text()
    assert await page.get_by_role("heading", name="Budget").count() == 1
    assert await page.get_by_role("button", name="Resolve").count() == 0  # CommentOnly resolves nothing
    await page.get_by_label("Comment", exact=True).fill("The desk costs more than 100.")
    await page.get_by_label("Your name (optional)").fill("Olivia Outside")
    await shot(page, "share-comment-only")
    await page.get_by_role("button", name="Add comment").click()
    await page.wait_for_url(f"{base}/share/{link['token']}*")
    comment = page.get_by_role("article", name="Comment by Olivia Outside")
    assert "The desk costs more than 100." in await comment.inner_text()
    await shot(page, "share-after-comment")
    listed = await (await docs.get(f"/api/share/{link['token']}")).json()
    assert [c["text"] for c in listed["comments"]] == ["The desk costs more than 100."]


async def test_a_closed_individual_link_opens_only_after_the_mailed_code(
    browser, live_docs, docs, runtime, settings, monkeypatch, tmp_path
):
    monkeypatch.setattr(settings, "data_dir", tmp_path)  # mails land in <data_dir>/mail/
    monkeypatch.setattr(settings, "smtp_url", None)
    page, base = browser, str(live_docs.make_url("")).rstrip("/")
    link = await share(
        docs,
        runtime,
        permission="CommentOnly",
        accessMode="closed-individual",
        reviewerEmails=["ann@example.com"],
    )
    await page.goto(f"{base}/share/{link['token']}")
    assert "Money." not in await page.locator("body").inner_text()
    await page.get_by_label("Your email address").fill("ann@example.com")
    await shot(page, "share-closed-email")
    await page.get_by_role("button", name="Send me a code").click()
    await page.get_by_label("6-digit code from the mail").wait_for()
    assert "Money." not in await page.locator("body").inner_text()

    mails = await asyncio.to_thread(lambda: [p.read_bytes() for p in Path(tmp_path, "mail").glob("*.eml")])
    assert len(mails) == 1
    mail = message_from_bytes(mails[0])
    assert mail["To"] == "ann@example.com"
    code = code_in(str(mail.get_payload(decode=True), "utf-8"))  # type: ignore[arg-type]
    await page.get_by_label("6-digit code from the mail").fill(code)
    await shot(page, "share-closed-code")
    await page.get_by_role("button", name="Open the document").click()
    await page.locator("#document").wait_for()
    assert "Money." in await page.locator("#document").inner_text()
    assert "ann@example.com" in await page.locator("body").inner_text()
    await page.get_by_label("Comment", exact=True).fill("Approved from my side.")
    await page.get_by_role("button", name="Add comment").click()
    comment = page.get_by_role("article", name="Comment by ann@example.com")
    await comment.wait_for()
    await shot(page, "share-closed-open")
