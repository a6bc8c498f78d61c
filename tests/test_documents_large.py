"""Large documents: the section tree is read in pages (a document of up to 1000 sections answers as it
always did), the share page is cut into pages at section boundaries (a document of up to 256 KB of
Markdown is one page, as it always was), the rendered page is cached per document version (a merged
change shows at once), and writes on a large document merge exactly as on a small one (the new text's
sections derived without parsing it again must be the right ones). Behaviour only: the time these take
is bench/share_page.py's business."""

from __future__ import annotations

import re
from typing import Any

from tests.documents_support import content, make_key, upload_ready

WORDS = "Budget figures for the quarter and the year, with the reasons behind each line of them. " * 3


def _markdown(parts: int, words: str = WORDS) -> str:
    out = ["# Doc", "", "Opening words.", ""]
    for n in range(parts):
        out += [f"## Part {n}", "", f"Part {n} says: {words}", ""]
    return "\n".join(out)


async def _team(docs: Any, runtime: Any, data: bytes, name: str) -> tuple[list[dict], str, str]:
    keys = [await make_key(runtime, name=f"k{i}") for i in range(3)]
    doc = await upload_ready(docs, keys[0], data, name)
    base = f"/api/tap/{doc['id']}"
    for i, (key, role) in enumerate(zip(keys, ("editor", "reviewer", "reviewer"), strict=True)):
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"agent{i}", "role": role}
        )
        assert resp.status == 201, await resp.text()
    return keys, doc["id"], base


async def _merge(docs: Any, keys: list[dict], base: str, section: str, text: str) -> None:
    resp = await docs.post(
        f"{base}/proposals",
        headers=keys[0]["headers"],
        json={"sectionId": section, "content": text, "summary": "rewrite"},
    )
    assert resp.status == 201, await resp.text()
    proposal = (await resp.json())["proposalId"]
    for key in keys[1:]:
        resp = await docs.post(f"{base}/proposals/{proposal}/approve", headers=key["headers"])
        assert resp.status == 200, await resp.text()
    assert (await resp.json())["status"] == "approved"


def _flat(nodes: list[dict]) -> list[str]:
    out: list[str] = []
    for node in nodes:
        out.append(node["sectionId"])
        out.extend(_flat(node["children"]))
    return out


async def test_the_section_tree_of_a_large_document_is_read_in_pages(docs, runtime):
    key = await make_key(runtime)
    doc = await upload_ready(docs, key, _markdown(2400, "Short.").encode(), "many.md")
    expected = ["sec:doc", *(f"sec:doc:part-{n}" for n in range(2400))]
    url = f"/api/tap/{doc['id']}/sections"
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        resp = await docs.get(url, headers=key["headers"], params={"cursor": cursor} if cursor else {})
        assert resp.status == 200, await resp.text()
        page = await resp.json()
        pages += 1
        assert page["total"] == 2401
        assert len(_flat(page["sections"])) <= 1000
        if seen:  # a later page's sections hang from the document's heading, on the first page
            assert {node["parentId"] for node in page["sections"]} == {"sec:doc"}
        else:
            assert page["sections"][0]["parentId"] is None
        seen += _flat(page["sections"])
        cursor = page["nextCursor"]
        if cursor is None:
            break
        assert cursor == seen[-1]
    assert pages == 3
    assert seen == expected
    # A smaller page on request, and a cursor the document no longer has.
    resp = await docs.get(url, headers=key["headers"], params={"limit": "10", "cursor": "sec:doc:part-4"})
    page = await resp.json()
    assert _flat(page["sections"]) == [f"sec:doc:part-{n}" for n in range(5, 15)]
    assert page["nextCursor"] == "sec:doc:part-14"
    resp = await docs.get(url, headers=key["headers"], params={"cursor": "sec:doc:gone"})
    assert resp.status == 409
    assert (await resp.json())["code"] == "sections.cursor_stale"
    resp = await docs.get(url, headers=key["headers"], params={"limit": "1001"})
    assert resp.status == 400
    assert (await resp.json())["field"] == "limit"


async def test_a_small_document_answers_its_whole_tree_as_before(docs, runtime):
    key = await make_key(runtime)
    doc = await upload_ready(docs, key, _markdown(30).encode(), "few.md")
    resp = await docs.get(f"/api/tap/{doc['id']}/sections", headers=key["headers"])
    body = await resp.json()
    assert set(body) == {"documentId", "sections"}
    assert len(body["sections"]) == 1
    assert "parentId" not in body["sections"][0]
    assert len(body["sections"][0]["children"]) == 30


async def _share(docs: Any, key: dict, doc_id: str) -> str:
    resp = await docs.post(
        f"/api/documents/{doc_id}/share-link",
        headers=key["headers"],
        json={"permission": "ReadOnly", "accessMode": "open"},
    )
    assert resp.status == 201, await resp.text()
    return str((await resp.json())["token"])


async def _page(docs: Any, token: str, number: int | None = None) -> str:
    resp = await docs.get(f"/share/{token}", params={"page": str(number)} if number else {})
    assert resp.status == 200, await resp.text()
    return await resp.text()


def _article(page: str) -> str:
    return page[page.index('<article id="document"') : page.index("</article>")]


async def test_the_share_page_of_a_large_document_is_cut_into_pages_at_sections(docs, runtime):
    key = await make_key(runtime)
    markdown = _markdown(2000)
    assert len(markdown) > 2 * 256 * 1024
    doc = await upload_ready(docs, key, markdown.encode(), "large.md")
    token = await _share(docs, key, doc["id"])
    first = await _page(docs, token)
    count = int(re.search(r"Page 1 of (\d+)", first)[1])  # type: ignore[index]
    assert count >= 3
    headings: list[str] = []
    for number in range(1, count + 1):
        page = first if number == 1 else await _page(docs, token, number)
        assert f"Page {number} of {count}" in page
        ids = re.findall(r'<h2 id="(sec:doc:part-\d+)">', _article(page))
        assert ids, number
        headings += ids
        # Every section's link in the tree leads to the page that holds it.
        last = ids[-1]
        assert f'href="?page={number}#{last}"' in page
        if number < count:
            assert 'rel="next"' in page
            nxt = f"sec:doc:part-{int(last.rsplit('-', 1)[1]) + 1}"
            assert f'href="?page={number + 1}#{nxt}"' in page
        # Each page holds whole sections: a section's text is on its heading's page.
        assert f"Part {last.rsplit('-', 1)[1]} says:" in _article(page)
    assert headings == [f"sec:doc:part-{n}" for n in range(2000)]
    resp = await docs.get(f"/share/{token}", params={"page": str(count + 1)})
    assert resp.status == 404
    assert "page" in (await resp.text())
    for bad in ("page=0", "page=x", "page=1&page=2"):  # refused with a page, as every refusal here
        resp = await docs.get(f"/share/{token}?{bad}")
        assert resp.status == 400, bad
        assert resp.headers["Content-Type"].startswith("text/html")
    # A small document is one page, with no pager.
    small = await upload_ready(docs, key, _markdown(3).encode(), "small.md")
    page = await _page(docs, await _share(docs, key, small["id"]))
    assert "Page 1 of" not in page
    assert '<h2 id="sec:doc:part-2">Part 2</h2>' in page


async def test_a_merged_change_shows_on_the_share_page_at_once(docs, runtime):
    """The rendered page is cached per version: the version a merge makes is read afresh."""
    for parts in (3, 1500):  # one page, and a large document's first page
        keys, doc_id, base = await _team(docs, runtime, _markdown(parts).encode(), f"doc{parts}.md")
        token = await _share(docs, keys[0], doc_id)
        before = await _page(docs, token)
        assert "Part 1 says:" in before
        await _page(docs, token)  # read twice: cached now
        await _merge(docs, keys, base, "sec:doc:part-1", "Rewritten part one.")
        after = await _page(docs, token)
        assert "Rewritten part one." in _article(after)
        assert "Part 1 says:" not in _article(after)


async def test_changes_to_a_large_document_merge_where_they_belong(docs, runtime):
    """Each merge derives the new text's sections from the last one's; they must be a parse's."""
    markdown = _markdown(800)
    keys, doc_id, base = await _team(docs, runtime, markdown.encode(), "big.md")
    expected = markdown
    changes = [
        ("sec:doc:part-400", "Plain new words."),
        ("sec:doc:part-401", "New words\n\n### An added heading\n\nUnder it."),
        ("sec:doc:part-799", "The last part."),
        ("sec:doc:part-10", "```\nan open fence swallowing what follows"),
        ("sec:doc:part-5", "[ref]: https://example.com\n\nA reference."),
    ]
    for section, text in changes:
        await _merge(docs, keys, base, section, text)
        current = await content(docs, keys[0], doc_id)
        number = section.rsplit("-", 1)[1]
        old_body = f"Part {number} says: {WORDS}"
        assert old_body in expected
        expected = expected.replace(old_body, text, 1).rstrip("\n") + "\n"
        assert current == expected
        resp = await docs.get(f"{base}/sections", headers=keys[0]["headers"], params={"limit": "1000"})
        ids = _flat((await resp.json())["sections"])
        assert section in ids
        if section == "sec:doc:part-401":
            assert "sec:doc:part-401:an-added-heading" in ids
        if section == "sec:doc:part-10":  # the fence runs to the end: no heading after it is one
            assert ids[-1] == "sec:doc:part-10"
            assert len(ids) == 1 + 11  # the document and parts 0-10


async def test_a_cached_share_page_is_served_without_reading_the_text(docs, runtime):
    """A large document's text is megabytes: once a version's page is rendered, reading the page again
    reads the link, the session and the comments, never the document's Markdown."""
    from sqlalchemy import event

    key = await make_key(runtime)
    doc = await upload_ready(docs, key, _markdown(1500).encode(), "cached.md")
    token = await _share(docs, key, doc["id"])
    await _page(docs, token)  # rendered and cached (and the browser's session made: the next read keeps it)
    seen: list[str] = []

    def on_execute(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement)

    engine = runtime.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", on_execute)
    try:
        again = await _page(docs, token)
    finally:
        event.remove(engine, "before_cursor_execute", on_execute)
    assert "Part 1 says:" in _article(again)
    assert any("share_links" in s for s in seen), seen  # the statements were seen
    reads_text = [s for s in seen if "documents.content" in s]
    assert not reads_text, reads_text
