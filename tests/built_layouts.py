"""PDFs (fpdf2) with the layouts that plain text extraction loses, each with the facts a conversion must
keep: a receipt (and one padded with spaces, as a till prints it), a two-column page, a sparse table, a
letterhead, a work order of bold labels and values, a paragraph hyphenated at line ends, and pages with
running heads, page numbers, a bulleted list and a paragraph across the page break. Text is placed at
real positions, sizes and weights, as a word processor or a till would.

`python -m tests.built_layouts DIR` writes them (bench/convert_compare.py converts them too)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from fpdf import FPDF

STORE = ["CORNER GROCER", "12 Harbour Street, Sydney NSW 2000", "Phone: (02) 9000 1234", "ABN 12 345 678 901"]
ITEMS = [
    (f"Item {n:02d} {name}", f"{1 + n * 0.35:.2f}")
    for n, name in enumerate(
        [
            "Milk 2L",
            "Bread",
            "Eggs 12pk",
            "Butter",
            "Apples 1kg",
            "Bananas",
            "Rice 5kg",
            "Pasta",
            "Tomatoes",
            "Cheese",
            "Yoghurt",
            "Coffee",
            "Tea",
            "Sugar",
            "Flour",
            "Oats",
            "Honey",
            "Jam",
            "Olive oil",
            "Salt",
            "Pepper",
            "Onions",
            "Garlic",
            "Carrots",
            "Potatoes",
            "Lettuce",
            "Chicken",
            "Beef mince",
            "Soap",
            "Tissues",
            "Foil",
            "Lemons",
        ],
        1,
    )
]
RECEIPT_FOOTER = [
    "Subtotal 45.10",
    "GST included 4.10",
    "Card ****1234",
    "Thank you for shopping with us",
    "Receipt 000123 12/03/2025 10:42",
]

LEFT = [
    "Left column opens here. The committee met in March to review the budget for the new hall, "
    "and agreed that the first stage of the works should start in spring. Members asked for a "
    "plan of the stages with their costs, which the treasurer will bring to the next meeting.",
]
RIGHT = [
    "Right column opens here. The garden group reported that the new beds are planted and that "
    "volunteers water them twice a week. They asked for a second tap near the shed, and for a "
    "roster so that nobody waters alone in the summer months ahead of the open day.",
]

SPARSE = [
    ("Product Code", "Location", "Expected", "Actual", "Variance", "Status"),
    ("SKU-1001", "A-12", "450", "", "", ""),
    ("", "B-07", "", "289", "-23", ""),
    ("SKU-2002", "", "780", "778", "", "OK"),
    ("SKU-3003", "D-22", "", "156", "", "CRITICAL"),
]

LETTERHEAD = [
    "Harbour Plumbing Pty Ltd",
    "45 Wharf Road, Balmain NSW 2041",
    "Tel (02) 9555 0101",
    "accounts@harbourplumbing.example",
]
LETTER_HEADING = "Service report"
LETTER_NOT_HEADINGS = ["Odometer 48,210", "$1,250.00", "Job RO-20250312", "15/03/2025"]

HYPHEN_LINES = [
    "The team has now finished the data conver-",
    "sion of all the old ledgers, in a well-",
    "known open format, on a small self-",
    "hosted server, for the years 2020-",
    "2021 and the following spring, as plan-",
    "ned by the board at its last meeting.",
]
HYPHEN_TEXT = (
    "The team has now finished the data conversion of all the old ledgers, in a well-known open format, "
    "on a small self-hosted server, for the years 2020-2021 and the following spring, as planned by the "
    "board at its last meeting."
)


def _pdf() -> FPDF:
    pdf = FPDF(unit="pt", format="A4")
    pdf.core_fonts_encoding = "windows-1252"  # has the bullet
    pdf.set_auto_page_break(False)
    pdf.add_page()
    return pdf


def receipt() -> bytes:
    """A till receipt: the shop's letterhead, ~40 item lines with right-aligned prices, short totals."""
    pdf = _pdf()
    y = 50.0
    for i, line in enumerate(STORE):
        pdf.set_font("Helvetica", "B" if i == 0 else "", 14 if i == 0 else 9)
        pdf.text(60, y, line)
        y += 16 if i == 0 else 12
    y += 8
    pdf.set_font("Courier", "", 9)
    for name, price in ITEMS:
        pdf.text(60, y, name)
        pdf.text(260 - pdf.get_string_width(price), y, price)
        y += 11
    y += 6
    for line in RECEIPT_FOOTER:
        pdf.text(60, y, line)
        y += 11
    return bytes(pdf.output())


def till_receipt() -> bytes:
    """A till's receipt as a till prints it: every line one string of a monospaced font padded with
    spaces to the full width, so each line reaches the right edge as a paragraph's lines do."""
    pdf = _pdf()
    pdf.set_font("Courier", "", 9)
    width = 40
    lines = [f"{line:^{width}}" for line in STORE] + [""]
    lines += [f"{name:<{width - 8}}{price:>8}" for name, price in ITEMS] + [""]
    lines += [f"{line:^{width}}" for line in RECEIPT_FOOTER]
    y = 50.0
    for line in lines:
        if line.strip():
            pdf.text(60, y, line)
        y += 11
    return bytes(pdf.output())


RUNNING_HEAD = "Quarterly review of the hall works"
BULLETS = ["Roof repaired before winter", "Kitchen fitted in May", "Paths relaid by volunteers"]
ACROSS = (
    "The works went to plan over the quarter and the committee thanks every volunteer who gave "
    "their weekends to the hall, the garden and the paths around them."
)


def running_heads() -> bytes:
    """Two pages with a running head and a page number each, a bulleted list with a hanging indent,
    and a paragraph that runs on from the first page to the second."""
    pdf = _pdf()
    words = ACROSS.split()
    lines = [" ".join(words[:11]), " ".join(words[11:22]), " ".join(words[22:])]

    def furniture(n: int) -> None:
        pdf.set_font("Helvetica", "", 8)
        pdf.text(50, 40, RUNNING_HEAD)
        pdf.text(280, 810, f"Page {n} of 2")
        pdf.set_font("Helvetica", "", 10)

    furniture(1)
    y = 80.0
    for item in BULLETS:
        pdf.text(60, y, "\u2022")
        pdf.text(75, y, item)
        y += 13
    pdf.text(50, 770, lines[0])
    pdf.add_page()
    furniture(2)
    pdf.text(50, 80, lines[1])
    pdf.text(50, 93, lines[2])
    return bytes(pdf.output())


def two_columns() -> bytes:
    """A title across the page, then two columns of prose whose lines share baselines."""
    pdf = _pdf()
    pdf.set_font("Helvetica", "B", 18)
    pdf.text(50, 60, "Community newsletter")
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(50, 80)
    pdf.multi_cell(230, 13, LEFT[0], align="L")
    pdf.set_xy(315, 80)
    pdf.multi_cell(230, 13, RIGHT[0], align="L")
    return bytes(pdf.output())


def sparse_table() -> bytes:
    """A borderless table with empty cells, columns at fixed x positions (values left-aligned)."""
    pdf = _pdf()
    xs = [50, 140, 215, 285, 350, 420]
    y = 80.0
    for r, row in enumerate(SPARSE):
        pdf.set_font("Helvetica", "B" if r == 0 else "", 10)
        for x, value in zip(xs, row, strict=True):
            if value:
                pdf.text(x, y, value)
        y += 20
    pdf.set_font("Helvetica", "", 10)
    pdf.text(50, y + 20, "Counts were taken on the morning of the audit.")
    return bytes(pdf.output())


def letterhead() -> bytes:
    """A letterhead (name set large and bold, address, phone, email), a real heading, and bold large
    lines that are values, not headings."""
    pdf = _pdf()
    pdf.set_font("Helvetica", "B", 20)
    pdf.text(50, 60, LETTERHEAD[0])
    pdf.set_font("Helvetica", "", 9)
    for i, line in enumerate(LETTERHEAD[1:]):
        pdf.text(50, 76 + 11 * i, line)
    pdf.set_font("Helvetica", "B", 16)
    pdf.text(50, 150, LETTER_HEADING)
    y = 175.0
    for line in LETTER_NOT_HEADINGS:
        pdf.set_font("Helvetica", "B", 14)
        pdf.text(50, y, line)
        pdf.set_font("Helvetica", "", 10)
        pdf.text(50, y + 16, "Recorded by the technician on site.")
        y += 40
    pdf.set_font("Helvetica", "", 10)
    pdf.text(50, y, "The hot water system was serviced and the relief valve replaced.")
    return bytes(pdf.output())


FORM_HEADINGS = ["Scope of works", "Payment terms:"]
FORM_LABELS = ["Invoice to: Harbour Strata Pty Ltd", "Site contact: Jo Park"]
FORM_TEXT = "Strip and reseal the shower recess; replace two cracked tiles."


def form() -> bytes:
    """A work order set in one size: a bold label with its value, a label and value both bold, and two
    bold lines standing alone that head what follows (one ends in a colon, as a report's sections can)."""
    pdf = _pdf()
    y = 60.0
    for i, label in enumerate(FORM_LABELS):
        name, value = label.split(": ")
        pdf.set_font("Helvetica", "B", 10)
        pdf.text(50, y, name + ":")
        pdf.set_font("Helvetica", "B" if i else "", 10)
        pdf.text(50 + pdf.get_string_width(name + ": ") + 2, y, value)
        y += 24
    y += 20
    pdf.set_font("Helvetica", "B", 10)
    pdf.text(50, y, FORM_HEADINGS[0])
    pdf.set_font("Helvetica", "", 10)
    pdf.text(50, y + 20, FORM_TEXT)
    y += 60
    pdf.set_font("Helvetica", "B", 10)
    pdf.text(50, y, FORM_HEADINGS[1])
    pdf.set_font("Helvetica", "", 10)
    pdf.text(50, y + 20, "Fourteen days from the invoice date.")
    return bytes(pdf.output())


PAPER_TITLE = "Measuring what volunteers give to a community hall"
PAPER_AUTHORS = ["Ann Lee and Bo Chen", "ann.lee@uni.example, bo.chen@uni.example"]


def paper() -> bytes:
    """A paper's first page: its title set large, authors with their email addresses, then sections."""
    pdf = _pdf()
    pdf.set_font("Helvetica", "B", 18)
    pdf.text(50, 60, PAPER_TITLE)
    pdf.set_font("Helvetica", "", 10)
    pdf.text(50, 82, PAPER_AUTHORS[0])
    pdf.text(50, 95, PAPER_AUTHORS[1])
    pdf.set_font("Helvetica", "B", 13)
    pdf.text(50, 130, "Abstract")
    pdf.set_font("Helvetica", "", 10)
    pdf.text(50, 150, "We count the hours that volunteers gave to the hall over one year.")
    return bytes(pdf.output())


def hyphenated() -> bytes:
    """A paragraph whose lines end in hyphens: soft breaks, compounds and a number range."""
    pdf = _pdf()
    pdf.set_font("Helvetica", "B", 16)
    pdf.text(50, 60, "Ledger project")
    pdf.set_font("Times", "", 11)
    width = max(pdf.get_string_width(line) for line in HYPHEN_LINES)
    y = 90.0
    for line in HYPHEN_LINES[:-1]:
        # Justified like a typeset paragraph: each line but the last spread to the same width.
        words = line.split(" ")
        extra = (width - pdf.get_string_width(line)) / max(len(words) - 1, 1)
        x = 50.0
        for word in words:
            pdf.text(x, y, word)
            x += pdf.get_string_width(word + " ") + extra
        y += 14
    pdf.text(50, y, HYPHEN_LINES[-1])
    return bytes(pdf.output())


BUILDERS: dict[str, Callable[[], bytes]] = {
    "receipt.pdf": receipt,
    "till-receipt.pdf": till_receipt,
    "two-columns.pdf": two_columns,
    "running-heads.pdf": running_heads,
    "sparse-table.pdf": sparse_table,
    "letterhead.pdf": letterhead,
    "form.pdf": form,
    "paper.pdf": paper,
    "hyphenated.pdf": hyphenated,
}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("give a folder to write the PDFs into", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    folder.mkdir(parents=True, exist_ok=True)
    for name, build in BUILDERS.items():
        (folder / name).write_bytes(build())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
