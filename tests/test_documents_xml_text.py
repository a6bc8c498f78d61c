"""Text a Word file (XML 1.0) cannot carry: control characters other than tab, newline and carriage
return, and U+FFFE/U+FFFF. They may be in a document's Markdown (it is the user's text: a Markdown or text
upload, a proposal, a comment), and no reader or writer may fail on them: the DOCX download (built from
Markdown, or the original with merged changes), the share page. Each is written as a visible symbol
(C0 controls as their Control Pictures sign, U+0001 → U+2401; U+FFFE/U+FFFF as U+FFFD), and the download
says how many in `X-Characters-Replaced`."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import docx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from domain.documents import xmltext
from tests.documents_support import content, make_key, upload, upload_ready, wait_status

# Other threads of the test process (the broker's workers, the drivers) may use `random` while Hypothesis
# draws examples, which it reports as a strategy using `random`; the strategies here do not.
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
CONTROLS = "".join(chr(c) for c in range(1, 32) if chr(c) not in "\t\n\r")


def _word(*blocks: tuple[str, str]) -> bytes:
    """A DOCX of (style, text) paragraphs: "h1", "h2" headings, else body text."""
    word = docx.Document()
    for style, text in blocks:
        if style.startswith("h"):
            word.add_heading(text, level=int(style[1]))
        else:
            word.add_paragraph(text)
    out = io.BytesIO()
    word.save(out)
    return out.getvalue()


def _text(data: bytes) -> str:
    """Every piece of text of the Word file (body, footnotes), in order, without separators; opening
    it with python-docx first proves it is a Word file python-docx reads."""
    docx.Document(io.BytesIO(data))
    out = []
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for part in ("word/document.xml", "word/footnotes.xml"):
            if part in zf.namelist():
                root = etree.fromstring(zf.read(part))
                out.append("".join(t.text or "" for t in root.iter(f"{_W}t")))
    return "".join(out)


async def _download(docs: Any, key: dict, doc_id: str) -> tuple[bytes, Any]:
    resp = await docs.get(f"/api/documents/{doc_id}/download", headers=key["headers"])
    assert resp.status == 200, await resp.text()
    return await resp.read(), resp.headers


async def _team(docs: Any, runtime: Any, doc_id: str, keys: list[dict]) -> str:
    base = f"/api/tap/{doc_id}"
    for i, (key, role) in enumerate(zip(keys, ("editor", "reviewer", "reviewer"), strict=True)):
        resp = await docs.post(
            f"{base}/join", headers=key["headers"], json={"agentName": f"agent{i}", "role": role}
        )
        assert resp.status == 201, await resp.text()
    return base


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


def test_the_mapping_is_one_visible_character_for_each_unsafe_one():
    assert xmltext.safe("a\x01b\x1fc\x0bd\ufffee\uffff") == "a\u2401b\u241fc\u240bd\ufffde\ufffd"
    kept = "tab\tnew\nline\rok \u2028 \x7f \U0001fffe"
    assert xmltext.safe(kept) == kept
    assert xmltext.safe("lone \ud800 surrogate") == "lone \ufffd surrogate"
    assert xmltext.unsafe_count("a\x01b\x02\uffff") == 3
    assert xmltext.unsafe_count("plain") == 0


async def test_a_markdown_upload_with_control_characters_downloads_as_a_word_file(docs, runtime):
    key = await make_key(runtime)
    markdown = (
        "# Report \x01 one\n\n"
        "Body \x02 text with **bold \x03** and *it\x04* and `code \x05`, a [link \x06](https://example.com)"
        " and a note.[^1]\n\n"
        "- item \x07\n- item \x08 and $x$, CONCORDTEX7X as written\n\n"
        "| head \x0e | b |\n| --- | --- |\n| cell \x0f | \ufffe |\n\n"
        "```\nfenced \x10 code\n```\n\n"
        "> quoted \x1b\uffff\n\n"
        "[^1]: note \x11 text\n"
    )
    doc = await upload_ready(docs, key, markdown.encode(), "report.md", title="Title \x12 here")
    assert await content(docs, key, doc["id"]) == markdown  # the Markdown keeps the user's text
    data, headers = await _download(docs, key, doc["id"])
    text = _text(data)
    for expected in (
        "Report \u2401 one",
        "Body \u2402 text with ",
        "bold \u2403",
        "it\u2404",
        "code \u2405",
        "link \u2406",
        "item \u2407",
        "item \u2408 and $x$, CONCORDTEX7X as written",
        "head \u240e",
        "cell \u240f",
        "\ufffd",
        "fenced \u2410 code",
        "quoted \u241b\ufffd",
        "note \u2411 text",
    ):
        assert expected in text, expected
    assert docx.Document(io.BytesIO(data)).core_properties.title == "Title \u2412 here"
    assert headers["X-Characters-Replaced"] == str(xmltext.unsafe_count(markdown + "Title \x12 here"))
    # A document with nothing to replace says nothing.
    plain = await upload_ready(docs, key, b"# Plain\n\nText.\n", "plain.md")
    _, headers = await _download(docs, key, plain["id"])
    assert "X-Characters-Replaced" not in headers


async def test_a_change_with_control_characters_merges_into_an_uploaded_word_file(docs, runtime):
    keys = [await make_key(runtime, name=f"k{i}") for i in range(3)]
    original = _word(("h1", "Plan"), ("p", "Kept intro."), ("h2", "Budget"), ("p", "Old budget."))
    doc = await upload_ready(docs, keys[0], original, "plan.docx")
    base = await _team(docs, runtime, doc["id"], keys)
    await _merge(docs, keys, base, "sec:plan:budget", "New \x01 budget \uffff with **bold \x1f**.")
    data, headers = await _download(docs, keys[0], doc["id"])
    text = _text(data)
    assert "Kept intro." in text
    assert "New \u2401 budget \ufffd with " in text
    assert "bold \u241f" in text
    assert "Old budget." not in text
    assert headers["X-Characters-Replaced"] == "3"


async def test_the_share_page_shows_control_characters_as_symbols(docs, runtime):
    key = await make_key(runtime)
    doc = await upload_ready(docs, key, "# Shared \x01\n\nBody \x02 \uffff.\n".encode(), "shared.md")
    resp = await docs.post(
        f"/api/documents/{doc['id']}/share-link",
        headers=key["headers"],
        json={"permission": "FullReview", "accessMode": "open"},
    )
    assert resp.status == 201, await resp.text()
    token = (await resp.json())["token"]
    resp = await docs.post(
        f"/api/share/{token}/comments", json={"text": "A comment \x03 here", "author": "Ann \x04"}
    )
    assert resp.status == 201, await resp.text()
    resp = await docs.get(f"/share/{token}")
    assert resp.status == 200
    page = await resp.text()
    assert "Shared \u2401" in page
    assert "Body \u2402 \ufffd." in page
    assert "A comment \u2403 here" in page
    assert "Ann \u2404" in page
    assert not any(ch in page for ch in CONTROLS + "\ufffe\uffff")


async def test_nul_characters_in_an_upload_become_replacement_characters(docs, runtime):
    """PostgreSQL text cannot hold U+0000, and CommonMark reads it as U+FFFD: the conversion writes that.
    The sniffed head of a text upload is NUL-free (else it is binary), but a NUL may come later, or be a
    UTF-16 text's."""
    key = await make_key(runtime)
    late = b"# Late\n\n" + b"words " * 2000 + b"\n\nafter \x00 nul\n"
    doc = await upload_ready(docs, key, late, "late.md")
    md = await content(docs, key, doc["id"])
    assert "after \ufffd nul" in md
    assert "\x00" not in md
    wide = "# Wide\n\nsixteen \x00 bits\n".encode("utf-16")
    doc = await upload_ready(docs, key, wide, "wide.txt")
    md = await content(docs, key, doc["id"])
    assert "sixteen \ufffd bits" in md
    data, _ = await _download(docs, key, doc["id"])
    assert "sixteen \ufffd bits" in _text(data)


async def test_a_nul_in_the_title_field_is_a_400_naming_it(docs, runtime):
    key = await make_key(runtime)
    resp = await upload(docs, key, b"# T\n\nx\n", "t.md", title="bad \x00 title")
    assert resp.status == 400, await resp.text()
    assert (await resp.json())["field"] == "title"


async def test_line_separators_other_than_newline_do_not_move_section_boundaries(docs, runtime):
    """Markdown lines end at a newline (or CR); U+2028, U+0085 and U+001C-U+001E are characters of a line,
    as markdown-it reads them, so a section's body and a merged change land exactly where they belong."""
    keys = [await make_key(runtime, name=f"k{i}") for i in range(3)]
    markdown = "# Doc\n\n## A\n\nalpha\u2028beta\x1cgamma\x85delta\x1d\x1e\x0b\x0cend\n\n## B\n\nold b\n"
    doc = await upload_ready(docs, keys[0], markdown.encode(), "doc.md")
    base = await _team(docs, runtime, doc["id"], keys)
    await _merge(docs, keys, base, "sec:doc:b", "new b")
    assert await content(docs, keys[0], doc["id"]) == markdown.replace("old b", "new b")
    resp = await docs.get(f"{base}/sections", headers=keys[0]["headers"])
    ids = [s["sectionId"] for s in (await resp.json())["sections"][0]["children"]]
    assert ids == ["sec:doc:a", "sec:doc:b"]
    data, _ = await _download(docs, keys[0], doc["id"])
    assert "new b" in _text(data)


# ---- property: any text, any path -------------------------------------------------------------------

# Characters of every kind, with the troublesome ones (C0 controls, line separators, noncharacters) often.
_ANY = st.one_of(
    st.characters(codec="utf-8"),
    st.sampled_from(CONTROLS + "\x00\ufffe\uffff\u2028\u2029\x85\x7f\r"),
)
# Characters that Markdown leaves as they are (no ASCII punctuation, no whitespace): the plain part of
# a text, which must come back in the Word file exactly as mapped.
_PLAIN = st.one_of(
    st.characters(codec="utf-8", exclude_categories=("Zs", "Zl", "Zp", "Cc", "P", "S")),
    st.sampled_from(CONTROLS + "\ufffe\uffff"),
)


def _marked(plain: str) -> str:
    return f"QQ{plain}QQ"


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    anything=st.text(_ANY, max_size=60),
    plain=st.text(_PLAIN, min_size=1, max_size=20),
)
@pytest.mark.slow
async def test_any_text_goes_through_upload_proposal_merge_and_download(docs, runtime, anything, plain):
    keys = [await make_key(runtime, name=f"k{i}") for i in range(3)]
    # An upload whose Markdown holds the text (NUL becomes U+FFFD in the conversion).
    uploaded = f"# Doc\n\n{anything}\n\n{_marked(plain)}\n"
    resp = await upload(docs, keys[0], uploaded.encode(), "any.md")
    if "\x00" in uploaded[:8192]:  # binary to the type sniffing: refused as such
        assert resp.status == 415, await resp.text()
    else:
        assert resp.status == 202, await resp.text()
        doc = await wait_status(docs, keys[0], (await resp.json())["id"], "ready")
        data, _ = await _download(docs, keys[0], doc["id"])
        assert xmltext.safe(_marked(plain)) in _text(data)
    # A Word upload, a proposal holding the text, merged, downloaded: the original with the change.
    word = await upload_ready(docs, keys[0], _word(("h1", "Plan"), ("h2", "Part"), ("p", "Old.")), "w.docx")
    base = await _team(docs, runtime, word["id"], keys)
    change = f"{anything}\n\n{_marked(plain)}".replace("\x00", "")  # a NUL in JSON is a 400 of its own
    await _merge(docs, keys, base, "sec:plan:part", change)
    data, headers = await _download(docs, keys[0], word["id"])
    assert xmltext.safe(_marked(plain)) in _text(data)
    assert int(headers.get("X-Characters-Replaced", "0")) >= xmltext.unsafe_count(plain)
