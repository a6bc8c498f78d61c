"""Share links and comments."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from tests.documents_support import make_key, upload_ready

MD = b"# Plan\n\nIntro.\n\n## Budget\n\nMoney.\n"


async def test_share_links_modes_validation_and_lookup(docs, runtime):
    owner = await make_key(runtime, org="Acme")
    doc = await upload_ready(docs, owner, MD, "plan.md")
    url = f"/api/documents/{doc['id']}/share-link"
    resp = await docs.post(
        url, headers=owner["headers"], json={"permission": "CommentOnly", "accessMode": "open"}
    )
    assert resp.status == 201, await resp.text()
    link = await resp.json()
    assert link["token"].startswith("shr_")
    assert link["url"].endswith(f"/share/{link['token']}")  # the review page
    assert link["expiresAt"]
    resp = await docs.get(f"/api/masterdocuments/share-link/{link['token']}", headers=owner["headers"])
    assert resp.status == 200
    found = await resp.json()
    assert found["documentId"] == doc["id"]
    assert found["title"] == "plan"
    assert found["permission"] == "CommentOnly"
    assert found["accessMode"] == "open"

    bad = [
        ({"accessMode": "closed-individual"}, "reviewerEmails"),
        ({"accessMode": "closed-individual", "reviewerEmails": ["not-an-email"]}, "reviewerEmails"),
        ({"accessMode": "closed-org"}, "allowedDomain"),
        ({"accessMode": "closed-org", "allowedDomain": "no domain!"}, "allowedDomain"),
        (
            {"accessMode": "closed-org", "allowedDomain": "acme.com", "reviewerEmails": ["bob@other.org"]},
            "reviewerEmails",
        ),
        ({"permission": "Owner"}, "permission"),
        ({"accessMode": "secret"}, "accessMode"),
    ]
    for body, field in bad:
        resp = await docs.post(url, headers=owner["headers"], json=body)
        assert resp.status == 400, body
        assert field in (await resp.json())["detail"], body

    resp = await docs.post(
        f"/api/masterdocuments/{doc['id']}/share-link",
        headers=owner["headers"],
        json={
            "permission": "FullReview",
            "accessMode": "closed-individual",
            "reviewerEmails": ["Ann@Example.COM", "bob@example.com"],
        },
    )
    assert resp.status == 201
    closed = await resp.json()
    assert closed["reviewerEmails"] == ["Ann@example.com", "bob@example.com"]
    resp = await docs.get(f"/api/documents/{doc['id']}", headers=owner["headers"])
    assert (await resp.json())["reviewers"] == 2

    resp = await docs.post(
        url,
        headers=owner["headers"],
        json={"permission": "ReadOnly", "accessMode": "closed-org", "allowedDomain": "acme.com"},
    )
    assert resp.status == 201
    # The token is the credential: any holder sees the link's terms, never its reviewer list (the owner
    # lists that); unknown tokens are 404.
    other = await make_key(runtime, org="Globex")
    resp = await docs.get(f"/api/masterdocuments/share-link/{closed['token']}", headers=other["headers"])
    assert resp.status == 200
    assert (await resp.json())["reviewerEmails"] == []
    resp = await docs.get("/api/masterdocuments/share-link/shr_unknown", headers=owner["headers"])
    assert resp.status == 404
    resp = await docs.post(
        url, headers=owner["headers"], json={"permission": "ReadOnly", "accessMode": "open", "public": True}
    )
    public = await resp.json()
    resp = await docs.get(f"/api/masterdocuments/share-link/{public['token']}")
    assert resp.status == 200
    # An expired link is gone.
    from domain.documents.models import ShareLink
    from domain.kernel.clock import utcnow

    async with runtime.db.transaction() as session:
        await session.execute(update(ShareLink).values(expires_at=utcnow() - timedelta(seconds=1)))
    resp = await docs.get(f"/api/masterdocuments/share-link/{link['token']}", headers=owner["headers"])
    assert resp.status == 410
    assert (await resp.json())["code"] == "share_link_expired"
    resp = await docs.post(url, headers=other["headers"], json={})
    assert resp.status == 404


async def test_comments_create_search_and_resolve_rules(docs, runtime):
    owner = await make_key(runtime, org="Acme", name="Owner")
    writer = await make_key(runtime, org="Acme", name="Writer")
    third = await make_key(runtime, org="Acme", name="Third")
    doc = await upload_ready(docs, owner, MD, "plan.md")
    resp = await docs.post(
        "/api/comments",
        headers=writer["headers"],
        json={"documentId": doc["id"], "text": "Budget is thin", "paragraphId": "sec:plan:budget"},
    )
    assert resp.status == 201, await resp.text()
    c1 = await resp.json()
    assert c1["author"] == "Writer"
    assert c1["paragraphId"] == "sec:plan:budget"
    assert c1["createdAt"]
    resp = await docs.post(
        "/api/comments", headers=owner["headers"], json={"documentId": doc["id"], "text": "Typo in intro"}
    )
    c2 = await resp.json()
    resp = await docs.post(
        "/api/comments",
        headers=owner["headers"],
        json={"documentId": doc["id"], "text": "x", "paragraphId": "sec:nowhere"},
    )
    assert resp.status == 422
    resp = await docs.post("/api/comments", headers=owner["headers"], json={"documentId": doc["id"]})
    assert resp.status == 400
    assert "text" in (await resp.json())["detail"]

    # Neither owner nor author → 403; the author and the owner may.
    resp = await docs.put(f"/api/comments/{c1['id']}/resolve", headers=third["headers"])
    assert resp.status == 403
    resp = await docs.put(f"/api/comments/{c1['id']}/resolve", headers=writer["headers"])
    assert resp.status == 200
    done = await resp.json()
    assert done["resolved"] is True
    assert done["resolvedAt"]
    resp = await docs.put(f"/api/comments/{c2['id']}/resolve", headers=owner["headers"])
    assert resp.status == 200

    resp = await docs.get(
        f"/api/comments/search?documentId={doc['id']}&resolved=true&author=Writer", headers=owner["headers"]
    )
    body = await resp.json()
    assert body["total"] == 1
    assert body["data"][0]["text"] == "Budget is thin"
    resp = await docs.get(f"/api/comments/search?documentId={doc['id']}", headers=owner["headers"])
    assert (await resp.json())["total"] == 2
    resp = await docs.get("/api/comments/search?resolved=maybe", headers=owner["headers"])
    assert resp.status == 400
    resp = await docs.get(f"/api/documents/{doc['id']}", headers=owner["headers"])
    assert (await resp.json())["comments"] == {"total": 2, "resolved": 2}
    other = await make_key(runtime, org="Globex")
    resp = await docs.get(f"/api/comments/search?documentId={doc['id']}", headers=other["headers"])
    assert resp.status == 404
    resp = await docs.get("/api/comments/search", headers=other["headers"])
    assert (await resp.json())["total"] == 0
    resp = await docs.put(f"/api/comments/{c1['id']}/resolve", headers=other["headers"])
    assert resp.status == 404
