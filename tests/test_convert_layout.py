"""PDF layout kept by conversion (receipts, columns, sparse tables, letterheads, line-end hyphens) and
HTML main content with its landmarks and images: uploaded over HTTP for the key cases, the converter
function for the rest."""

from __future__ import annotations

import pytest

from domain.documents import convert_html, convert_pdf, pdf_headings, pdf_words
from tests import built_layouts as built
from tests.documents_support import content, fixture_path, make_key, upload_ready


def _lines(md: str) -> list[str]:
    return [ln for ln in md.splitlines() if ln.strip()]


async def test_receipt_letterhead_and_hyphens_through_upload(docs, runtime):
    key = await make_key(runtime)
    doc = await upload_ready(docs, key, built.receipt(), "receipt.pdf")
    receipt = _lines(await content(docs, key, doc["id"]))
    # Every item is a line (a table row) of its own, and so is each short line of the receipt.
    for name, price in built.ITEMS:
        assert f"| {name} | {price} |" in receipt
    for line in [*built.STORE, *built.RECEIPT_FOOTER]:
        assert line in receipt, f"{line!r} not a line of its own: {receipt}"
    assert not [ln for ln in receipt if ln.startswith("#")]  # the shop's letterhead is no heading

    doc = await upload_ready(docs, key, built.letterhead(), "letter.pdf")
    letter = _lines(await content(docs, key, doc["id"]))
    assert [ln for ln in letter if ln.startswith("#")] == [f"# {built.LETTER_HEADING}"]
    for line in [*built.LETTERHEAD, *built.LETTER_NOT_HEADINGS]:
        assert line in letter

    doc = await upload_ready(docs, key, built.hyphenated(), "ledger.pdf")
    md = await content(docs, key, doc["id"])
    assert built.HYPHEN_TEXT in md, md


async def test_html_landmarks_in_main_and_image_targets_through_upload(docs, runtime):
    key = await make_key(runtime)
    dot = b"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    page = b"""<html><head><title>Search</title></head><body>
    <div role="banner">Site banner</div><nav>Site menu</nav>
    <main><h1>Results</h1>
      <div class="result"><h2><a href="https://example.com/a">First result</a></h2>
        <div role="contentinfo">Snippet of the first result.</div></div>
      <aside role="complementary">Related: second topic</aside>
      <div role="navigation">Page 2 of the results</div>
      <p><a href="report.html"><img src="figure1.png" alt="Figure 1"></a>
         <img src="file:///C:/Users/ann/Documents/chart.png" alt="Chart">
         <img src="data:image/png;base64,DOT" alt="Dot"></p>
    </main>
    <footer role="contentinfo">Copyright footer</footer></body></html>""".replace(b"DOT", dot)
    doc = await upload_ready(docs, key, page, "search.html")
    md = await content(docs, key, doc["id"])
    assert "Snippet of the first result." in md
    assert "Related: second topic" in md
    assert "Page 2 of the results" in md
    assert "[![Figure 1](figure1.png)](report.html)" in md
    assert "![Chart](chart.png)" in md
    assert "Users/ann" not in md
    assert "*(image: Dot, embedded PNG image, 70 bytes)*" in md
    assert "base64" not in md
    for chrome in ("Site banner", "Site menu", "Copyright footer"):
        assert chrome not in md


def test_html_without_main_drops_chrome_roles():
    md = convert_html.convert(
        b'<body><div role="navigation">Menu</div><p>Body text</p><div role="contentinfo">Foot</div></body>'
    )
    assert md.strip() == "Body text"


def test_till_receipt_padded_with_spaces_keeps_its_lines():
    receipt = _lines(convert_pdf.convert(built.till_receipt()))
    for name, price in built.ITEMS:
        assert f"| {name} | {price} |" in receipt
    for line in [*built.STORE, *built.RECEIPT_FOOTER]:
        assert line in receipt, f"{line!r} not a line of its own: {receipt}"


def test_running_heads_page_numbers_bullets_and_a_paragraph_across_pages():
    md = convert_pdf.convert(built.running_heads())
    assert _lines(md) == [built.RUNNING_HEAD, *[f"- {b}" for b in built.BULLETS], built.ACROSS]
    assert "- Kitchen fitted in May\n- Paths" in md  # one tight list


def test_a_papers_title_above_email_addresses_is_still_a_heading():
    md = convert_pdf.convert(built.paper())
    assert [ln for ln in md.splitlines() if ln.startswith("#")] == [f"# {built.PAPER_TITLE}", "## Abstract"]
    for line in built.PAPER_AUTHORS:
        assert line in md.splitlines()


def test_a_forms_bold_labels_are_not_headings():
    md = convert_pdf.convert(built.form())
    assert [ln for ln in md.splitlines() if ln.startswith("#")] == [f"## {h}" for h in built.FORM_HEADINGS]
    for line in [*built.FORM_LABELS, built.FORM_TEXT]:
        assert line in md.splitlines()


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Site contact: Jo Park", True),
        ("Invoice to: Harbour Strata Pty Ltd", True),
        ("Appendix B: Data tables", False),
        ("Section 2: Scope", False),
        ("Scope of works", False),
    ],
)
def test_labels_with_values(text, label):
    assert pdf_headings.is_label(text) is label


def test_sparse_table_keeps_its_columns():
    md = convert_pdf.convert(built.sparse_table())
    rows = ["| " + " | ".join(row) + " |" for row in built.SPARSE]
    assert [ln for ln in md.splitlines() if ln.startswith("|")] == [
        rows[0],
        "|" + " --- |" * len(built.SPARSE[0]),
        *rows[1:],
    ]
    assert "Counts were taken on the morning of the audit." in md


def test_two_columns_are_read_one_after_the_other():
    md = convert_pdf.convert(built.two_columns())
    assert _lines(md) == ["# Community newsletter", built.LEFT[0], built.RIGHT[0]]


@pytest.mark.parametrize(
    ("left", "right", "joined"),
    [
        ("data conver-", "sion of", "data conversion of"),
        ("as plan-", "ned by", "as planned by"),
        ("a well-", "known format", "a well-known format"),
        ("a self-", "hosted server", "a self-hosted server"),
        ("chat-", "optimized models", "chat-optimized models"),
        ("years 2020-", "2021", "years 2020-2021"),
        ("Jean-", "Paul", "Jean-Paul"),
        ("no hyphen", "here", "no hyphen here"),
    ],
)
def test_line_end_hyphens(left, right, joined):
    assert pdf_words.join(left, right) == joined


def test_document_evidence_decides_hyphens():
    # The document writes 'co-operate' elsewhere, so a break after 'co-' keeps the hyphen; and it writes
    # 'selfish' whole, so that break is a soft one.
    evidence = pdf_words.vocabulary("members co-operate; a selfish act")
    assert pdf_words.join("they co-", "operate", evidence) == "they co-operate"
    assert pdf_words.join("a self-", "ish act", evidence) == "a selfish act"


@pytest.mark.parametrize(
    "text",
    [
        "123 Main Street, Redmond, WA 98052",
        "Phone: (425) 000-0000",
        "Odometer 9,800",
        "$12,500.00",
        "Total 250",
        "12/03/2025",
        "Repair Order # RO-20221108",
        "Preliminary Estimate (ID: EST-1008)",
        "accounts@example.com",
        "This sentence is much too long to be a heading of any document that anyone would write.",
    ],
)
def test_not_headings(text):
    assert not pdf_headings.reads_as_heading(text)


@pytest.mark.parametrize(
    "text",
    [
        "1 Introduction",
        "2.3 Results by quarter",
        "Booking Summary",
        "GPT-4 results",
        "Section 10",
        "Appendix B",
        "Annual report 2024",
        "Appendix B: Data tables",
        "Case study: a community hall",
        "Recommendations:",  # a report's section, set bold and standing alone
    ],
)
def test_headings(text):
    assert pdf_headings.reads_as_heading(text)


def test_shared_fixture_pdfs_keep_their_structure():
    repair = convert_pdf.convert(fixture_path("markitdown-REPAIR-2022-INV-001_multipage.pdf"))
    headings = [ln for ln in repair.splitlines() if ln.startswith("#")]
    # Page 2 is set at a slightly larger scale; its headings keep page 1's level.
    assert headings == ["# Estimate Totals", "# Supplies"] * 2, repair
    for line in ("ZAVA AUTO REPAIR", "123 Main Street, Redmond, WA 98052", "Phone: (425) 000-0000"):
        assert line in repair.splitlines()  # the letterhead: lines of their own, never headings
        assert not any(line in h for h in headings)
    assert not any("Odometer" in h or "EST-1008" in h for h in headings)
    assert "|  |  | Odometer | 9,800 |" in repair

    sparse = convert_pdf.convert(fixture_path("markitdown-SPARSE-2024-INV-1234_borderless_table.pdf"))
    assert "| Product Code | Location | Expected | Actual | Variance | Status |" in sparse
    assert "|  | B-07 |  | 289 | -23 |  |" in sparse
    assert "| SKU-6678 | Software | $200.00 | $42,000.00 | 2024-10-25 | High Value |" in sparse

    paper = convert_pdf.convert(fixture_path("markitdown-test.pdf"))
    assert "three reasons confirming its" in paper  # con- / firming: one word
    assert "because chat-optimized LLMs" in paper  # chat- / optimized: a compound
    assert "agents that can leverage LLMs" in paper  # across a list item's numbered first line
    # A paragraph break where the page leaves more space than between lines.
    assert "\n\nOur insight is to use multi-agent conversations" in paper
