"""Upload, type detection, conversion of documents the tests build and of every shared fixture, list,
metadata and DOCX download."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path

import docx
import pytest

from tests import built_documents as built
from tests.documents_support import content, fixture_path, make_key, upload, upload_ready, wait_status

ROOT = Path(__file__).resolve().parents[1]


def _sections(tree: list[dict]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for node in tree:
        out.append((node["sectionId"], node["title"]))
        out.extend(_sections(node["children"]))
    return out


def _table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    """The Markdown lines of a table: header row, separator, body rows."""
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    return [lines[0], "|" + " --- |" * len(rows[0]), *lines[1:]]


async def test_built_docx_converts_with_its_structure(docs, runtime):
    key = await make_key(runtime)
    # The type comes from the bytes, not the name.
    doc = await upload_ready(docs, key, built.docx_bytes(), "upload.bin")
    assert doc["format"] == "docx"
    md = await content(docs, key, doc["id"])
    lines = md.splitlines()
    assert [ln for ln in lines if ln.startswith("#")] == [
        "# Budget summary",
        "## Priorities",
        "## Costs",
        "## Site plan",
    ]
    assert f"[finance policy]({built.LINK})" in md
    assert [ln for ln in lines if ln.startswith("- ")] == [f"- {b}" for b in built.BULLETS]
    numbered = [f"{n}. {step}" for n, step in enumerate(built.STEPS, 1)]
    assert [ln for ln in lines if re.match(r"\d+\. ", ln)] == numbered
    assert [ln for ln in lines if ln.startswith("|")] == _table(built.COSTS)
    assert re.search(rf"!\[{built.IMAGE_ALT}\]\(media/image1\.png\)", md), md
    assert "[^1]" in md
    assert f"[^1]: {built.FOOTNOTE}" in md
    assert "base64" not in md
    resp = await docs.get(f"/api/tap/{doc['id']}/sections", headers=key["headers"])
    assert _sections((await resp.json())["sections"]) == [
        ("sec:budget-summary", "Budget summary"),
        ("sec:budget-summary:priorities", "Priorities"),
        ("sec:budget-summary:costs", "Costs"),
        ("sec:budget-summary:site-plan", "Site plan"),
    ]


async def test_built_pdf_converts_with_its_structure(docs, runtime):
    key = await make_key(runtime)
    doc = await upload_ready(docs, key, built.pdf_bytes(), "upload.bin")
    assert doc["format"] == "pdf"
    md = await content(docs, key, doc["id"])
    lines = md.splitlines()
    assert [ln for ln in lines if ln.startswith("#")] == ["# Annual report", "## Members", "## Finances"]
    assert [ln for ln in lines if ln.startswith("- ")] == [f"- {b}" for b in built.PDF_BULLETS]
    assert [ln for ln in lines if ln.startswith("|")] == _table(built.PDF_ROWS)
    assert "This report covers the year to June." in md
    assert "Both quarters closed with a surplus." in md
    resp = await docs.get(f"/api/tap/{doc['id']}/sections", headers=key["headers"])
    assert [sid for sid, _ in _sections((await resp.json())["sections"])] == [
        "sec:annual-report",
        "sec:annual-report:members",
        "sec:annual-report:finances",
    ]


async def test_readme_upload_example_uses_a_document_the_project_has(docs, runtime):
    files = re.findall(r"-F file=@(\S+)", (ROOT / "README.md").read_text())
    assert files, "README shows no upload"
    key = await make_key(runtime)
    for name in files:
        path = ROOT / name
        assert path.is_file(), f"README uploads {name}, which the repository does not have"
        doc = await upload_ready(docs, key, path.read_bytes(), path.name)
        md = await content(docs, key, doc["id"])
        assert md.startswith("# "), md


# fixture → snippets the Markdown must contain (headings, table rows, list items, links, footnotes)
EXPECTED: dict[str, list[str]] = {
    "mammoth-empty.docx": [],
    "mammoth-footnotes.docx": ["Ouch[^1].[^2]", "[^1]: A tachyon walks into a bar.", "[^2]: Fin."],
    "mammoth-simple-list.docx": ["- Apple\n- Banana"],
    "mammoth-strict-format.docx": ["Test"],
    "mammoth-tables.docx": ["Above", "| Top left | Top right |", "| Bottom left | Bottom right |", "Below"],
    "markitdown-equations.docx": [
        "For $m = 1$",
        "From Eq. 36.1.3",
        "$$\\sin \\theta = \\frac{m\\lambda}{a} = ",
        "550 \\times 10^{-6}",
    ],
    "markitdown-rlink.docx": ["Testing Linked Images", "![A red and blue square"],
    "markitdown-test.docx": [
        "# Abstract",
        "# Introduction",
        "| 13 | 14 | 49e168b7-d2ae-407f-a055-2167576f39a1 | 15 | 16 | 17 |",
        "](media/image1.png)",
        "314b0a30-5b04-470b-b9f7-eed2c2bec74a",
    ],
    "markitdown-test.pdf": ["# 1 Introduction", "Large language models (LLMs) are becoming a crucial"],
    "markitdown-movie-theater-booking-2024.pdf": [
        "# Booking Summary",
        "| Start Date | End Date | # Shows | Gross Amount | Net Amount |",
        "| 12/20/24 | 12/31/24 | 48 | $12,500.00 | $11,250.00 |",
    ],
    "markitdown-SPARSE-2024-INV-1234_borderless_table.pdf": [
        "# INVENTORY RECONCILIATION REPORT",
        "| SKU-8847 | Electronics | $45.00 | $13,005.00 |",
    ],
    "markitdown-REPAIR-2022-INV-001_multipage.pdf": [
        "ZAVA AUTO REPAIR",
        "| Body Labor | 2 | 150 | 300 |",
        "| Paint Labor | 1.5 | 150 | 225 |",
    ],
    "markitdown-test_blog.html": [
        "# Does Model and Inference Parameter Matter in LLM Applications?",
        "## Experiment Setup",
        "[MATH](https://datasets-benchmarks-proceedings.neurips.cc/",
        "- gpt-4, the state of the art LLM",
    ],
    "pact-v1.1-specification.md": ["## Quick Start", "## 1. Problem Statement"],
}
FORMATS = {"docx": "docx", "pdf": "pdf", "html": "html", "md": "markdown"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_every_fixture_converts_with_its_content(docs, runtime, name):
    path = fixture_path(name)
    key = await make_key(runtime)
    data = path.read_bytes()
    # A misleading name must not matter: the type comes from the bytes.
    resp = await upload(docs, key, data, "upload.bin")
    assert resp.status == 202, await resp.text()
    doc = await resp.json()
    assert doc["status"] == "processing"
    assert doc["format"] == FORMATS[name.rsplit(".", 1)[1]] or name.endswith(".md")
    await wait_status(docs, key, doc["id"], "ready")
    md = await content(docs, key, doc["id"])
    for snippet in EXPECTED[name]:
        assert snippet in md, f"{name}: {snippet!r} missing from:\n{md[:3000]}"
    assert "data:image" not in md
    assert "base64" not in md.lower() or name.endswith(".md")
    if name == "pact-v1.1-specification.md":
        assert md == data.decode("utf-8")
    if name == "markitdown-rlink.docx":
        assert "file:///" not in md  # a linked image's local target is never followed nor leaked
    resp = await docs.get(f"/api/tap/{doc['id']}/sections", headers=key["headers"])
    tree = (await resp.json())["sections"]
    headings = [line for line in md.splitlines() if line.startswith("#") and " " in line]
    if headings and not name.endswith(".md"):
        assert tree, f"{name}: headings but no sections"


async def test_docx_headings_become_sections(docs, runtime):
    key = await make_key(runtime)
    doc = await upload_ready(docs, key, built.docx_bytes(), "budget.docx")
    assert doc["title"] == "budget"
    resp = await docs.get(f"/api/pact/{doc['id']}/sections", headers=key["headers"])
    top = (await resp.json())["sections"]
    assert [s["sectionId"] for s in top] == ["sec:budget-summary"]
    assert [s["title"] for s in top[0]["children"]] == ["Priorities", "Costs", "Site plan"]


async def test_upload_rejections(docs, runtime, settings, monkeypatch):
    key = await make_key(runtime)
    resp = await upload(docs, key, b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "picture.docx")
    assert resp.status == 415
    assert "PNG" in (await resp.json())["detail"]
    resp = await upload(docs, key, b"", "empty.txt")
    assert resp.status == 422
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.writestr("hello.txt", "hi")
    resp = await upload(docs, key, zipped.getvalue(), "archive.docx")
    assert resp.status == 415
    assert "not a Word" in (await resp.json())["detail"]
    resp = await docs.post("/api/documents", headers=key["headers"], json={"file": "x"})
    assert resp.status == 415
    monkeypatch.setattr(settings, "max_upload_bytes", 4096)
    resp = await upload(docs, key, b"a" * 5000, "big.txt")
    assert resp.status == 413
    assert (await resp.json())["status"] == 413
    resp = await docs.get("/api/documents", headers=key["headers"])
    assert (await resp.json())["total"] == 0


def _docx_with(document_xml: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("word/document.xml", document_xml)
    return out.getvalue()


async def test_corrupt_encrypted_and_zip_bomb_documents_fail_with_a_reason(docs, runtime):
    from pypdf import PdfWriter

    key = await make_key(runtime)
    cases = {}
    cases["corrupt"] = _docx_with(b"<w:document><not-closed>")
    cases["zip bomb"] = _docx_with(b"<w:document>" + b" " * 3_000_000 + b"</w:document>")
    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer.encrypt("secret")
    pdf = io.BytesIO()
    writer.write(pdf)
    cases["encrypted"] = pdf.getvalue()
    cases["corrupt PDF"] = b"%PDF-1.7\n" + b"garbage" * 50
    for reason, data in cases.items():
        resp = await upload(docs, key, data, "x.docx")
        assert resp.status == 202, await resp.text()
        doc = await wait_status(docs, key, (await resp.json())["id"], "failed")
        assert reason.split()[-1].lower() in doc["error"].lower(), (reason, doc["error"])
        resp = await docs.get(f"/api/tap/{doc['id']}/content", headers=key["headers"])
        assert resp.status == 422
    # The worker survived all of that.
    doc = await upload_ready(docs, key, b"# Still alive\n", "ok.md")
    assert doc["status"] == "ready"


async def test_a_page_nested_a_hundred_thousand_deep_converts_with_its_text(docs, runtime):
    """Tags nested beyond htmlmd.MAX_DEPTH are left out as the page is parsed (their text kept), so such a
    page converts instead of failing "nested too deeply" after seconds or minutes of work."""
    key = await make_key(runtime)
    depth = 100_000
    page = (
        "<html><body><main><h1>Deep page</h1>"
        + "<table><tr><td>" * depth
        + "Innermost words"
        + "</td></tr></table>" * depth
        + "<p>After the tables.</p></main></body></html>"
    )
    doc = await upload_ready(docs, key, page.encode(), "deep.html")
    md = await content(docs, key, doc["id"])
    assert md.startswith("# Deep page")
    assert "Innermost words" in md
    assert "After the tables." in md


async def test_list_tags_paging_and_metadata(docs, runtime):
    key = await make_key(runtime)
    for i in range(5):
        await upload_ready(
            docs, key, f"# Doc {i}\n".encode(), f"doc-{i}.md", tags="q1,finance" if i % 2 else "q2"
        )
    resp = await docs.get("/api/masterdocuments?tag=finance&page=1&pageSize=1", headers=key["headers"])
    body = await resp.json()
    assert body["total"] == 2
    assert body["pageSize"] == 1
    assert len(body["data"]) == 1
    assert "finance" in body["data"][0]["tags"]
    resp = await docs.get("/api/documents?page=2&pageSize=2", headers=key["headers"])
    body = await resp.json()
    assert body["total"] == 5
    assert body["page"] == 2
    assert len(body["data"]) == 2
    resp = await docs.get("/api/documents?pageSize=0", headers=key["headers"])
    assert resp.status == 400
    assert "pageSize" in (await resp.json())["detail"]
    doc_id = body["data"][0]["id"]
    resp = await docs.get(f"/api/masterdocuments/{doc_id}", headers=key["headers"])
    meta = await resp.json()
    assert meta["reviewers"] == 0
    assert meta["comments"] == {"total": 0, "resolved": 0}
    resp = await docs.get("/api/documents/nope", headers=key["headers"])
    assert resp.status == 404


async def test_download_docx_round_trip(docs, runtime):
    key = await make_key(runtime)
    md = (
        "# Budget\n\nSee [the plan](https://example.com/plan) for **details**.\n\n"
        "## Items\n\n- rent\n- staff\n  - nurses\n\n1. first\n2. second\n\n"
        "| Item | Cost |\n| --- | --- |\n| Rent | 100 |\n"
    )
    doc = await upload_ready(docs, key, md.encode(), "budget.md")
    resp = await docs.get(f"/api/masterdocuments/{doc['id']}/binary", headers=key["headers"])
    assert resp.status == 200
    assert resp.headers["Content-Type"].startswith(
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    )
    data = await resp.read()
    word = docx.Document(io.BytesIO(data))
    styles = [(p.style.name if p.style else None, p.text) for p in word.paragraphs]
    assert ("Heading 1", "Budget") in styles
    assert ("Heading 2", "Items") in styles
    assert ("List Bullet", "rent") in styles
    assert ("List Bullet 2", "nurses") in styles
    assert ("List Number", "first") in styles
    assert word.tables[0].cell(1, 0).text == "Rent"
    assert word.tables[0].cell(1, 1).text == "100"
    links = [r.target_ref for r in word.part.rels.values() if r.reltype.endswith("/hyperlink")]
    assert links == ["https://example.com/plan"]
    # Back through the converter: the structure survives the round trip.
    again = await upload_ready(docs, key, data, "budget.docx")
    md2 = await content(docs, key, again["id"])
    for snippet in (
        "# Budget",
        "## Items",
        "[the plan](https://example.com/plan)",
        "- rent",
        "1. first",
        "| Rent | 100 |",
    ):
        assert snippet in md2, md2
