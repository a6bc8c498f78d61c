"""The share page shows what the document holds and keeps its token to itself: a DOCX's picture through
the link (and only the link's own document's, only once a closed link's address is proven), its footnote
rendered, people's words for the permission, readable dates; every page answers HEAD and says
`Referrer-Policy: no-referrer`; a comment after the proof is by the proven address."""

from __future__ import annotations

import io
import re
from html import unescape
from typing import Any

import docx
import pytest

from tests.built_documents import FOOTNOTE, docx_bytes, png
from tests.documents_support import make_key, upload_ready
from tests.sharing.conftest import MD, code_from_dir, csrf_of


@pytest.fixture
async def owner(runtime: Any) -> dict[str, Any]:
    return await make_key(runtime, org="Acme", name="Owner")


async def link_to(docs: Any, owner: dict[str, Any], doc: dict[str, Any], **body: Any) -> dict[str, Any]:
    resp = await docs.post(f"/api/documents/{doc['id']}/share-link", headers=owner["headers"], json=body)
    assert resp.status == 201, await resp.text()
    return dict(await resp.json())


def _image_src(page: str) -> str:
    found = re.search(r'<img src="([^"]+)"', page)
    assert found, page
    return unescape(found.group(1))


async def test_a_docx_picture_and_footnote_are_on_the_page_through_the_token(docs, owner):
    doc = await upload_ready(docs, owner, docx_bytes(), "budget.docx")
    link = await link_to(docs, owner, doc, permission="ReadOnly", accessMode="open")
    base = f"/share/{link['token']}"
    resp = await docs.get(base)
    assert resp.status == 200
    page = await resp.text()
    assert "[^1]" not in page
    assert FOOTNOTE in page
    assert 'class="footnote-ref"' in page
    assert "img-src 'self'" in resp.headers["Content-Security-Policy"]
    src = _image_src(page)
    assert src == f"{base}/media/image1.png"
    image = await docs.get(src)
    assert image.status == 200
    assert image.headers["Content-Type"] == "image/png"
    assert await image.read() == png()  # the very picture the DOCX carries
    assert image.headers["Referrer-Policy"] == "no-referrer"
    assert "sandbox" in image.headers["Content-Security-Policy"]


async def test_an_image_is_served_only_through_a_live_link_of_its_own_document(docs, owner):
    pictured = await upload_ready(docs, owner, docx_bytes(), "budget.docx")
    word = docx.Document()
    word.add_heading("No pictures", level=1)
    word.add_paragraph("Only words.")
    out = io.BytesIO()
    word.save(out)
    plain = await upload_ready(docs, owner, out.getvalue(), "words.docx")
    markdown = await upload_ready(docs, owner, MD, "plan.md")
    own = await link_to(docs, owner, pictured, permission="ReadOnly", accessMode="open")
    other = await link_to(docs, owner, plain, permission="ReadOnly", accessMode="open")
    text = await link_to(docs, owner, markdown, permission="ReadOnly", accessMode="open")
    assert (await docs.get(f"/share/{own['token']}/media/image1.png")).status == 200
    # another document's picture through this document's link, or under a wrong token: not found
    for path in (
        f"/share/{other['token']}/media/image1.png",
        f"/share/{text['token']}/media/image1.png",
        f"/share/{own['token']}/media/image2.png",
        f"/share/{own['token']}/media/document.xml",
        f"/share/{own['token']}/media/..%2Fdocument.xml",
        f"/share/{own['token'][:-2]}xx/media/image1.png",
        "/share/not-a-token/media/image1.png",
    ):
        resp = await docs.get(path)
        assert resp.status == 404, (path, resp.status)
        assert resp.content_type == "application/problem+json"
    # a revoked link shows nothing any more
    revoked = await docs.delete(
        f"/api/documents/{pictured['id']}/share-links/{own['id']}", headers=owner["headers"]
    )
    assert revoked.status in (200, 204), await revoked.text()
    gone = await docs.get(f"/share/{own['token']}/media/image1.png")
    assert gone.status == 410
    page = await (await docs.get(f"/share/{own['token']}")).text()
    assert "revoked on" in page
    assert "UTC" in page
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:", page)  # no raw ISO timestamp for people


async def test_a_closed_link_shows_its_picture_only_after_the_proof(docs, owner, mail_dir):
    doc = await upload_ready(docs, owner, docx_bytes(), "budget.docx")
    link = await link_to(
        docs,
        owner,
        doc,
        permission="CommentOnly",
        accessMode="closed-individual",
        reviewerEmails=["ann@example.com"],
    )
    base = f"/share/{link['token']}"
    first = await docs.get(base)
    assert (await docs.get(f"{base}/media/image1.png")).status == 403
    resp = await docs.post(
        f"{base}/verify", data={"csrf": csrf_of(await first.text()), "email": "ann@example.com"}
    )
    assert resp.status == 200
    code = code_from_dir(mail_dir, "ann@example.com")
    resp = await docs.post(
        f"{base}/code",
        data={"csrf": csrf_of(await resp.text()), "email": "ann@example.com", "code": code},
        allow_redirects=False,
    )
    assert resp.status == 303
    assert (await docs.get(f"{base}/media/image1.png")).status == 200
    page = await (await docs.get(base)).text()
    assert "You comment as <strong>ann@example.com</strong>" in page
    resp = await docs.post(
        f"{base}/comments",
        data={"csrf": csrf_of(page), "text": "Checked the costs.", "author": "Ann Lee"},
        allow_redirects=False,
    )
    assert resp.status == 303
    found = await docs.get(f"/api/comments/search?documentId={doc['id']}", headers=owner["headers"])
    authors = [c["author"] for c in (await found.json())["data"]]
    assert authors == ["Ann Lee (ann@example.com)"]  # the proven address stays with the name


async def test_every_share_page_answers_head_and_keeps_the_referrer(docs, owner):
    doc = await upload_ready(docs, owner, MD, "plan.md")
    link = await link_to(docs, owner, doc, permission="FullReview", accessMode="open")
    base = f"/share/{link['token']}"
    page = await docs.get(base)
    assert page.headers["Referrer-Policy"] == "no-referrer"
    text = await page.text()
    assert "FullReview" not in text
    assert "full review" in text
    head = await docs.head(base)
    assert head.status == 200
    assert head.headers["Referrer-Policy"] == "no-referrer"
    assert head.headers["Content-Type"].startswith("text/html")
    for path in (f"/share/{link['token'][:-2]}xx", base + "?page=0"):
        for method in (docs.get, docs.head):
            resp = await method(path)
            assert resp.status in (400, 404), (path, resp.status)
            assert resp.headers["Referrer-Policy"] == "no-referrer"
    post = await docs.post(f"{base}/comments", data={"csrf": "stale", "text": "x"})
    assert post.status == 403
    assert post.headers["Referrer-Policy"] == "no-referrer"


async def test_the_page_links_the_apps_stylesheet_and_date_script_and_inlines_neither(docs, owner):
    doc = await upload_ready(docs, owner, MD, "plan.md")
    link = await link_to(docs, owner, doc, permission="FullReview", accessMode="open")
    resp = await docs.get(f"/share/{link['token']}")
    page = await resp.text()
    assert re.findall(r'<link rel="stylesheet" href="([^"]+)">', page) == ["/assets/concord.css"]
    assert re.findall(r'<script src="([^"]+)" defer></script>', page) == ["/assets/concord.js"]
    assert "<style" not in page
    assert "style=" not in page
    assert "<script>" not in page
    csp = resp.headers["Content-Security-Policy"]
    assert "style-src 'self';" in csp
    assert "script-src 'self';" in csp
    assert "unsafe-inline" not in csp
    assert re.search(r'<time datetime="[^"]+">\d\d \w{3} \d{4} \d\d:\d\d UTC</time>', page)
    for path, kind, rule in (
        ("/assets/concord.css", "text/css", ".proposal {"),
        ("/assets/concord.js", "text/javascript", "Intl.DateTimeFormat"),
    ):
        asset = await docs.get(path)
        assert asset.status == 200
        assert asset.headers["Content-Type"].startswith(kind)
        assert rule in await asset.text()


async def test_a_picture_an_edit_took_out_is_no_longer_served(docs, owner):
    doc = await upload_ready(docs, owner, docx_bytes(), "budget.docx", approvalPolicy="auto")
    link = await link_to(docs, owner, doc, permission="ReadOnly", accessMode="open")
    picture = f"/share/{link['token']}/media/image1.png"
    assert (await docs.get(picture)).status == 200
    base = f"/api/tap/{doc['id']}"
    resp = await docs.post(f"{base}/join", headers=owner["headers"], json={"agentName": "editor"})
    assert resp.status == 201, await resp.text()
    resp = await docs.post(
        f"{base}/proposals",
        headers=owner["headers"],
        json={
            "sectionId": "sec:budget-summary:site-plan",
            "content": "The plan is with the council.\n",
            "summary": "Drop the picture",
        },
    )
    assert resp.status == 201, await resp.text()
    assert (await resp.json())["status"] == "approved"  # the auto policy merges at once (approved: applied)
    resp = await docs.get(picture)
    assert resp.status == 404  # still in the uploaded package, but the document no longer shows it
    assert (await resp.json())["code"] == "share_media_not_found"
    assert "<img" not in await (await docs.get(f"/share/{link['token']}")).text()
