"""Share links in a real headless Chromium, as a reviewer from outside the organisation uses them: a
CommentOnly link opens the document and takes a comment; a closed-individual link shows nothing of the
document until the address is proven with the code the mail carried."""

from __future__ import annotations

import asyncio
from email import message_from_bytes
from pathlib import Path
from typing import Any

from tests.built_documents import FOOTNOTE, docx_bytes
from tests.documents_support import make_key, upload_ready
from tests.pages.test_review_browser import shot
from tests.review.support import doc_object, doc_propose
from tests.sharing.conftest import MD, code_from_dir, code_in


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


async def wider_than_viewport(page: Any) -> int:
    """How far the page scrolls sideways (0: it fits its viewport)."""
    return int(await page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))


async def test_an_outside_reviewer_sees_a_docx_picture_and_footnote_and_comments_as_her_address(
    browser, live_docs, docs, runtime, settings, monkeypatch, tmp_path
):
    monkeypatch.setattr(settings, "data_dir", tmp_path)
    monkeypatch.setattr(settings, "smtp_url", None)
    page, base = browser, str(live_docs.make_url("")).rstrip("/")
    owner = await make_key(runtime, org="Acme", name="Owner")
    doc = await upload_ready(docs, owner, docx_bytes(), "budget.docx")
    resp = await docs.post(
        f"/api/documents/{doc['id']}/share-link",
        headers=owner["headers"],
        json={
            "permission": "CommentOnly",
            "accessMode": "closed-individual",
            "reviewerEmails": ["oli@example.org"],
        },
    )
    link = await resp.json()
    await page.set_viewport_size({"width": 1280, "height": 800})
    await page.goto(f"{base}/share/{link['token']}")
    await page.get_by_label("Your email address").fill("oli@example.org")
    await page.get_by_role("button", name="Send me a code").click()
    await page.get_by_label("6-digit code from the mail").wait_for()
    code = await asyncio.to_thread(code_from_dir, Path(tmp_path, "mail"), "oli@example.org")
    await page.get_by_label("6-digit code from the mail").fill(code)
    await page.get_by_role("button", name="Open the document").click()
    document = page.locator("#document")
    await document.wait_for()

    picture = page.get_by_role("img", name="Site plan")
    await picture.scroll_into_view_if_needed()
    assert await picture.evaluate("img => img.complete && img.naturalWidth") == 4  # the DOCX's own PNG
    text = await document.inner_text()
    assert "[^1]" not in text
    assert FOOTNOTE in await page.locator("#document .footnotes").inner_text()
    ref = page.locator("#document sup.footnote-ref a")
    assert await ref.count() == 1
    assert await page.locator("header time[datetime]").count() == 1  # the link's end, a readable date
    assert "reading and commenting" in await page.locator("header").inner_text()
    await shot(page, "share-docx-1280")

    await page.get_by_label("Comment", exact=True).fill("The staff line looks high.")
    await page.get_by_label("Display name (optional, shown before your address)").fill("Olivia Outside")
    await page.get_by_role("button", name="Add comment").click()
    comment = page.get_by_role("article", name="Comment by Olivia Outside (oli@example.org)")
    await comment.wait_for()
    assert "The staff line looks high." in await comment.inner_text()

    await page.set_viewport_size({"width": 390, "height": 844})
    await page.reload()
    await document.wait_for()
    assert await wider_than_viewport(page) <= 0
    await picture.scroll_into_view_if_needed()
    await shot(page, "share-docx-390")


async def test_a_full_review_page_fits_a_phone_and_shows_the_section_now_beside_the_proposal(
    browser, live_docs, docs, team
):
    (alice, bob, _carol), doc_base = team["keys"], team["base"]
    pid = await doc_propose(docs, alice, doc_base, text="Less money, spent carefully.")
    await doc_object(docs, bob, doc_base, pid, reason="breaks the grant's terms")
    owner, doc_id = alice, team["doc"]["id"]  # the editor uploaded the document
    resp = await docs.post(
        f"/api/documents/{doc_id}/share-link",
        headers=owner["headers"],
        json={"permission": "FullReview", "accessMode": "open"},
    )
    link = await resp.json()
    page, base = browser, str(live_docs.make_url("")).rstrip("/")
    for width, height in ((1280, 800), (390, 844)):
        await page.set_viewport_size({"width": width, "height": height})
        await page.goto(f"{base}/share/{link['token']}")
        proposal = page.locator("article.proposal")
        await proposal.wait_for()
        said = await proposal.inner_text()
        assert "breaks the grant's terms" in said
        assert "Less money, spent carefully." in said
        assert "sec:" not in said  # the section by its heading
        assert await page.get_by_role("region", name="Now", exact=True).count() == 1
        # What it changes, as on the review desk: the old words struck through, the new ones inserted.
        changes = page.get_by_role("list", name="Changes line by line")
        assert await changes.locator("del").count() >= 1
        assert "spent carefully" in " ".join(await changes.locator("ins").all_inner_texts())
        assert await wider_than_viewport(page) <= 0
        await proposal.scroll_into_view_if_needed()
        await shot(page, f"share-full-review-{width}", full_page=True)
