"""Share links that work: the review page, the token-scoped API, permissions, access modes with a mailed
one-time code, expiry and revocation, the owner's list."""

from __future__ import annotations

import re
import socket
from datetime import timedelta
from typing import Any

from tests.documents_support import make_key, upload_ready
from tests.sharing.conftest import code_from_dir, csrf_of

WRITES = ("comment", "resolve")


async def _comment_api(docs: Any, token: str, text: str = "Looks fine", **extra: Any) -> Any:
    return await docs.post(f"/api/share/{token}/comments", json={"text": text, **extra})


async def test_open_link_page_renders_markdown_sections_and_comments(docs, shared):
    link = await shared["link"](permission="ReadOnly", accessMode="open")
    assert link["url"].endswith(f"/share/{link['token']}")
    resp = await docs.post(
        "/api/comments",
        headers=shared["owner"]["headers"],
        json={
            "documentId": shared["doc"]["id"],
            "text": "Check <b>totals</b>",
            "paragraphId": "sec:plan:budget",
        },
    )
    assert resp.status == 201
    resp = await docs.get(f"/share/{link['token']}")
    assert resp.status == 200
    assert resp.content_type == "text/html"
    page = await resp.text()
    assert '<h2 id="sec:plan:budget">Budget</h2>' in page
    assert "<table>" in page
    assert "<td>Desk</td>" in page
    assert "<strong>bold</strong>" in page
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'href="#sec:plan:risks"' in page  # the section tree
    assert "Check &lt;b&gt;totals&lt;/b&gt;" in page  # comments, escaped
    assert 'lang="en"' in page
    assert "<main" in page
    assert "<nav" in page
    assert "<form" not in page  # ReadOnly: nothing to post
    # Only the app's own date script and stylesheet: nothing inline, nothing from elsewhere.
    assert "script-src 'self';" in resp.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in resp.headers["Content-Security-Policy"]
    assert "HttpOnly" in resp.headers["Set-Cookie"]
    assert "SameSite=Lax" in resp.headers["Set-Cookie"]

    resp = await docs.get(f"/api/share/{link['token']}")
    assert resp.status == 200
    view = await resp.json()
    assert view["document"]["id"] == shared["doc"]["id"]
    assert view["document"]["content"].startswith("# Plan")
    assert [s["sectionId"] for s in view["sections"]] == ["sec:plan"]
    assert view["comments"][0]["text"] == "Check <b>totals</b>"
    assert view["link"]["permission"] == "ReadOnly"


TREE_MD = (
    b"Before any heading.\n\n# Plan\n\n### Skipped a level\n\nDeep.\n\n## Budget\n\nMoney.\n\n"
    b"# Annex\n\nEnd.\n"
)


def _node(section_id: str, title: str, level: int, *children: dict[str, Any]) -> dict[str, Any]:
    nested = list(children)
    return {"sectionId": section_id, "title": title, "heading": title, "level": level, "children": nested}


async def test_the_share_view_shows_the_documents_section_tree(docs, shared):
    """The API's view answers the document's whole section tree, key for key as the document API's sections
    read does; the page lists it as its contents and as the comment form's sections, in document order."""
    owner = shared["owner"]
    doc = await upload_ready(docs, owner, TREE_MD, "tree.md")
    resp = await docs.post(
        f"/api/documents/{doc['id']}/share-link",
        headers=owner["headers"],
        json={"permission": "CommentOnly", "accessMode": "open"},
    )
    assert resp.status == 201, await resp.text()
    token = (await resp.json())["token"]
    resp = await docs.get(f"/api/share/{token}")
    assert resp.status == 200, await resp.text()
    view = await resp.json()
    expected = [
        _node("sec:_root", "", 0),
        _node(
            "sec:plan",
            "Plan",
            1,
            _node("sec:plan:skipped-a-level", "Skipped a level", 2),
            _node("sec:plan:budget", "Budget", 2),
        ),
        _node("sec:annex", "Annex", 1),
    ]
    assert view["sections"] == expected
    assert [list(node) for node in view["sections"]] == [list(node) for node in expected]  # the keys' order
    resp = await docs.get(f"/api/tap/{doc['id']}/sections", headers=owner["headers"])
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["sections"] == view["sections"]

    page = await (await docs.get(f"/share/{token}")).text()
    ids = ["sec:_root", "sec:plan", "sec:plan:skipped-a-level", "sec:plan:budget", "sec:annex"]
    contents = re.search(r'<nav aria-labelledby="toc">(.*?)</nav>', page, re.DOTALL)
    assert contents, page
    assert re.findall(r'<a href="#([^"]+)">', contents[1]) == ids
    assert '<li><a href="#sec:plan">Plan</a><ul><li>' in contents[1]  # nested under its parent
    options = re.findall(r'<option value="([^"]*)">([^<]*)</option>', page)
    assert options == [
        ("", "The whole document"),
        ("sec:_root", "Introduction"),
        ("sec:plan", "Plan"),
        ("sec:plan:skipped-a-level", "\u2014 Skipped a level"),
        ("sec:plan:budget", "\u2014 Budget"),
        ("sec:annex", "Annex"),
    ]


async def test_each_permission_against_each_write(docs, shared):
    links = {
        p: await shared["link"](permission=p, accessMode="open")
        for p in ("ReadOnly", "CommentOnly", "FullReview")
    }
    owner = shared["owner"]
    resp = await docs.post(
        "/api/comments",
        headers=owner["headers"],
        json={"documentId": shared["doc"]["id"], "text": "Owner note"},
    )
    target = (await resp.json())["id"]
    expected = {
        ("ReadOnly", "comment"): 403,
        ("ReadOnly", "resolve"): 403,
        ("CommentOnly", "comment"): 201,
        ("CommentOnly", "resolve"): 403,
        ("FullReview", "comment"): 201,
        ("FullReview", "resolve"): 200,
    }
    for (perm, write), status in expected.items():
        token = links[perm]["token"]
        if write == "comment":
            resp = await _comment_api(docs, token, paragraphId="sec:plan:budget", author="Ann")
        else:
            resp = await docs.post(f"/api/share/{token}/comments/{target}/resolve")
        body = await resp.json()
        assert resp.status == status, (perm, write, body)
        if status == 403:
            assert body["code"] == "share_permission"
            assert perm in body["detail"]
            assert body["permission"] == perm
        elif write == "comment":
            assert body["author"] == "Ann"
            assert body["paragraphId"] == "sec:plan:budget"
        else:
            assert body["resolved"] is True
    # A comment of another document is not reachable through this link.
    resp = await docs.post(f"/api/share/{links['FullReview']['token']}/comments/{'0' * 36}/resolve")
    assert resp.status == 404
    resp = await _comment_api(docs, links["CommentOnly"]["token"], text="")
    assert resp.status == 400
    assert "text" in (await resp.json())["detail"]


async def test_comment_through_page_form_needs_csrf(docs, shared):
    link = await shared["link"](permission="CommentOnly", accessMode="open")
    base = f"/share/{link['token']}"
    resp = await docs.get(base)
    page = await resp.text()
    csrf = csrf_of(page)
    assert '<label for="text">' in page
    resp = await docs.post(f"{base}/comments", data={"text": "No token"}, allow_redirects=False)
    assert resp.status == 403
    assert "CSRF" in await resp.text()
    resp = await docs.post(
        f"{base}/comments", data={"text": "Bad token", "csrf": "x.y"}, allow_redirects=False
    )
    assert resp.status == 403
    resp = await docs.post(
        f"{base}/comments",
        data={"text": "Good point", "csrf": csrf, "paragraphId": "sec:plan:risks", "author": "Bea"},
        allow_redirects=False,
    )
    assert resp.status == 303, await resp.text()
    assert resp.headers["Location"] == f"{base}?done=comment"
    resp = await docs.get(resp.headers["Location"])
    page = await resp.text()
    assert "Your comment was added." in page
    assert "Good point" in page
    assert "Bea" in page
    # The same CSRF token from another browser (no session cookie) is refused.
    docs.session.cookie_jar.clear()
    resp = await docs.post(f"{base}/comments", data={"text": "Replay", "csrf": csrf}, allow_redirects=False)
    assert resp.status == 403


async def test_closed_individual_after_mailed_code_over_smtp(docs, shared, smtp):
    link = await shared["link"](
        permission="FullReview", accessMode="closed-individual", reviewerEmails=["ann@example.com"]
    )
    token, base = link["token"], f"/share/{link['token']}"
    resp = await docs.get(f"/api/share/{token}")
    assert resp.status == 403
    assert (await resp.json())["code"] == "share_verification_required"
    resp = await _comment_api(docs, token)
    assert resp.status == 403
    resp = await docs.get(f"/api/masterdocuments/share-link/{token}")  # no key: the link's terms only
    assert resp.status == 200
    found = await resp.json()
    assert found["reviewerEmails"] == []
    assert found["accessMode"] == "closed-individual"

    page = await (await docs.get(base)).text()
    assert 'type="email"' in page
    assert "Budget" not in page
    # An unlisted address gets the same answer and no mail.
    resp = await docs.post(f"{base}/verify", data={"email": "eve@example.com", "csrf": csrf_of(page)})
    assert resp.status == 200
    unlisted = await resp.text()
    assert not smtp.messages
    resp = await docs.post(f"{base}/verify", data={"email": "Ann@Example.com", "csrf": csrf_of(page)})
    listed = await resp.text()
    assert resp.status == 200
    assert (
        unlisted.replace("eve@example.com", "X").split("csrf")[0]
        == listed.replace("ann@example.com", "X").split("csrf")[0]
    )
    assert len(smtp.messages) == 1
    code = smtp.code_for("ann@example.com")
    wrong = "000000" if code != "000000" else "111111"
    resp = await docs.post(
        f"{base}/code",
        data={"email": "ann@example.com", "code": wrong, "csrf": csrf_of(listed)},
        allow_redirects=False,
    )
    assert resp.status == 403
    assert "wrong or no longer valid" in await resp.text()
    resp = await docs.post(
        f"{base}/code",
        data={"email": "ann@example.com", "code": code, "csrf": csrf_of(listed)},
        allow_redirects=False,
    )
    assert resp.status == 303, await resp.text()
    cookie = resp.cookies[f"concord_share_{link['id']}"]
    assert cookie["httponly"]
    assert cookie["samesite"] == "Lax"
    page = await (await docs.get(resp.headers["Location"])).text()
    assert "Your address is proven" in page
    assert 'id="sec:plan:budget"' in page
    assert "ann@example.com" in page
    # The session cookie admits the API too; the comment's author is the proven address.
    resp = await _comment_api(docs, token, text="Signed")
    assert resp.status == 201
    assert (await resp.json())["author"] == "ann@example.com"
    resp = await docs.get(f"/api/share/{token}")
    assert (await resp.json())["reviewer"] == "ann@example.com"
    # The code worked once.
    resp = await docs.post(
        f"/api/share/{token}/verification/confirm", json={"email": "ann@example.com", "code": code}
    )
    assert resp.status == 403


async def test_closed_org_domain_and_exhausted_attempts_with_mail_files(docs, shared, mail_dir):
    link = await shared["link"](permission="CommentOnly", accessMode="closed-org", allowedDomain="acme.com")
    token = link["token"]
    resp = await docs.post(f"/api/share/{token}/verification", json={"email": "bob@other.org"})
    assert resp.status == 400
    body = await resp.json()
    assert "acme.com" in body["detail"]
    assert body["field"] == "email"
    resp = await docs.post(f"/api/share/{token}/verification", json={"email": "not-an-address"})
    assert resp.status == 400
    resp = await docs.post(f"/api/share/{token}/verification", json={"email": "bob@acme.com"})
    assert resp.status == 202, await resp.text()
    code = code_from_dir(mail_dir, "bob@acme.com")
    wrong = "000000" if code != "000000" else "111111"
    details = []
    for _ in range(6):
        resp = await docs.post(
            f"/api/share/{token}/verification/confirm", json={"email": "bob@acme.com", "code": wrong}
        )
        assert resp.status == 403
        details.append((await resp.json())["detail"])
    # Every refusal reads the same: a wrong code, a spent one, none at all (see test_code_limits.py).
    assert len(set(details)) == 1
    assert "stops working after 5 wrong tries" in details[0]
    resp = await docs.post(
        f"/api/share/{token}/verification/confirm", json={"email": "bob@acme.com", "code": code}
    )
    assert resp.status == 403  # the right code no longer works
    # A new code works, and the cookie admits the API.
    resp = await docs.post(f"/api/share/{token}/verification", json={"email": "bob@acme.com"})
    code = code_from_dir(mail_dir, "bob@acme.com")
    resp = await docs.post(
        f"/api/share/{token}/verification/confirm", json={"email": "bob@acme.com", "code": code}
    )
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["email"] == "bob@acme.com"
    resp = await _comment_api(docs, token)
    assert resp.status == 201


async def test_code_expires_after_ten_minutes(docs, shared, mail_dir, clock):
    link = await shared["link"](permission="ReadOnly", accessMode="closed-org", allowedDomain="acme.com")
    token = link["token"]
    await docs.post(f"/api/share/{token}/verification", json={"email": "bob@acme.com"})
    code = code_from_dir(mail_dir, "bob@acme.com")
    clock.advance(timedelta(minutes=11))
    resp = await docs.post(
        f"/api/share/{token}/verification/confirm", json={"email": "bob@acme.com", "code": code}
    )
    assert resp.status == 403
    assert "no longer valid" in (await resp.json())["detail"]


async def test_public_closed_link_skips_the_code(docs, shared):
    link = await shared["link"](
        permission="ReadOnly", accessMode="closed-individual", reviewerEmails=["ann@example.com"], public=True
    )
    resp = await docs.get(f"/api/share/{link['token']}")
    assert resp.status == 200


async def test_expired_and_revoked_links_are_gone_and_owner_lists(docs, shared, runtime, clock):
    owner, doc = shared["owner"], shared["doc"]
    short = await shared["link"](permission="CommentOnly", accessMode="open", expiresInHours=1)
    other = await shared["link"](permission="ReadOnly", accessMode="open")
    resp = await docs.get(f"/api/documents/{doc['id']}/share-links", headers=owner["headers"])
    assert resp.status == 200
    listed = await resp.json()
    assert [x["id"] for x in listed["data"]] == [short["id"], other["id"]]
    assert all(x["state"] == "active" and "token" not in x for x in listed["data"])

    stranger = await make_key(runtime, org="Globex")
    resp = await docs.get(f"/api/documents/{doc['id']}/share-links", headers=stranger["headers"])
    assert resp.status == 404
    resp = await docs.delete(
        f"/api/documents/{doc['id']}/share-links/{other['id']}", headers=stranger["headers"]
    )
    assert resp.status == 404
    reader = await make_key(runtime, org="Acme", scopes="documents:read")
    resp = await docs.get(f"/api/documents/{doc['id']}/share-links", headers=reader["headers"])
    assert resp.status == 403

    resp = await docs.delete(
        f"/api/documents/{doc['id']}/share-links/{other['id']}", headers=owner["headers"]
    )
    assert resp.status == 200
    assert (await resp.json())["state"] == "revoked"
    resp = await docs.get(f"/api/share/{other['token']}")
    assert resp.status == 410
    assert (await resp.json())["code"] == "share_link_revoked"
    resp = await docs.get(f"/share/{other['token']}")
    assert resp.status == 410
    assert "revoked" in await resp.text()
    resp = await docs.delete(f"/api/documents/{doc['id']}/share-links/nope", headers=owner["headers"])
    assert resp.status == 404

    clock.advance(timedelta(hours=2))
    resp = await _comment_api(docs, short["token"])
    assert resp.status == 410
    assert (await resp.json())["code"] == "share_link_expired"
    resp = await docs.get(f"/share/{short['token']}")
    assert resp.status == 410
    assert "expired" in await resp.text()
    resp = await docs.get(f"/api/masterdocuments/share-link/{short['token']}")
    assert resp.status == 410
    resp = await docs.get("/share/shr_unknown")
    assert resp.status == 404
    resp = await docs.get(f"/api/documents/{doc['id']}/share-links", headers=owner["headers"])
    assert [x["state"] for x in (await resp.json())["data"]] == ["expired", "revoked"]


async def test_full_review_decides_an_objected_proposal_via_page_and_api(docs, shared, runtime):
    owner, doc = shared["owner"], shared["doc"]
    base = f"/api/tap/{doc['id']}"
    keys = [owner, await make_key(runtime, org="Acme", name="k1")]
    for i, key in enumerate(keys):
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"a{i}", "role": "editor"}
        )
        assert resp.status == 201
    made = []
    for text in ("More money.", "Less money."):
        resp = await docs.post(
            f"{base}/proposals",
            headers=owner["headers"],
            json={"sectionId": "sec:plan:budget", "content": text, "summary": text},
        )
        assert resp.status == 201, await resp.text()
        prop = await resp.json()
        resp = await docs.post(
            f"{base}/proposals/{prop['proposalId']}/object", headers=keys[1]["headers"], json={"reason": "no"}
        )
        assert resp.status == 200, await resp.text()
        made.append(prop["proposalId"])
    comment_only = await shared["link"](permission="CommentOnly", accessMode="open")
    resp = await docs.post(
        f"/api/share/{comment_only['token']}/proposals/{made[0]}/decide",
        json={"decision": "approve", "note": "fine"},
    )
    assert resp.status == 403
    link = await shared["link"](permission="FullReview", accessMode="open")
    view = await (await docs.get(f"/api/share/{link['token']}")).json()
    assert [p["proposalId"] for p in view["proposals"]] == made
    resp = await docs.post(
        f"/api/share/{link['token']}/proposals/{made[0]}/decide", json={"decision": "reject", "note": ""}
    )
    assert resp.status == 400
    resp = await docs.post(
        f"/api/share/{link['token']}/proposals/{made[0]}/decide",
        json={"decision": "reject", "note": "Too costly"},
    )
    assert resp.status == 200, await resp.text()
    decided = await resp.json()
    assert decided["status"] == "rejected"
    assert decided["note"] == "Too costly"
    # The page's form decides the other one.
    page = await (await docs.get(f"/share/{link['token']}")).text()
    assert "Objected proposals (1)" in page
    resp = await docs.post(
        f"/share/{link['token']}/proposals/{made[1]}/decide",
        data={"decision": "approve", "note": "Agreed", "csrf": csrf_of(page)},
        allow_redirects=False,
    )
    assert resp.status == 303, await resp.text()
    resp = await docs.get(f"{base}/proposals?status=approved", headers=owner["headers"])
    assert [p["proposalId"] for p in (await resp.json())["proposals"]] == [made[1]]
    from sqlalchemy import select

    from domain.kernel.models import AuditEntry, Event

    async with runtime.db.read() as session:
        kinds = (await session.scalars(select(Event.type).where(Event.type == "pact.proposal.decided"))).all()
        ops = (await session.scalars(select(AuditEntry.op).where(AuditEntry.op == "share_link.decide"))).all()
    assert len(kinds) == 2
    assert len(ops) == 2
    resp = await docs.post(
        f"/api/share/{link['token']}/proposals/{made[1]}/decide", json={"decision": "reject", "note": "late"}
    )
    assert resp.status == 400


async def test_a_mail_relay_that_is_down_is_a_503_and_the_form_again(docs, shared, settings, monkeypatch):
    """No 500 when the relay fails: the API says 503 with Retry-After, the page shows the form again."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(settings, "smtp_url", f"smtp://127.0.0.1:{port}")
    monkeypatch.setattr(settings, "outbound_trusted_hosts", ["127.0.0.1"])
    link = await shared["link"](
        permission="ReadOnly", accessMode="closed-individual", reviewerEmails=["ann@example.com"]
    )
    token, base = link["token"], f"/share/{link['token']}"
    resp = await docs.post(f"/api/share/{token}/verification", json={"email": "ann@example.com"})
    assert resp.status == 503, await resp.text()
    assert resp.headers["Retry-After"] == "60"
    problem = await resp.json()
    assert problem["code"] == "mail_unavailable"
    assert str(port) not in problem["detail"]  # the relay's address is the operator's business
    page = await (await docs.get(base)).text()
    resp = await docs.post(f"{base}/verify", data={"email": "ann@example.com", "csrf": csrf_of(page)})
    assert resp.status == 503
    text = await resp.text()
    assert "try again in a minute" in text
    assert 'type="email"' in text
