"""Does a PDF line read as a heading? Type size and weight say a line stands out; its words say whether it
is a heading or something set large or bold for other reasons: a letterhead's address and phone number,
an amount, a date, a reference code, a reading (odometer 9,800) or a sentence."""

from __future__ import annotations

import re

MAX_WORDS = 12
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_NUMBERING = re.compile(
    r"^(?:(?:\d{1,2}\.)*\d{1,2}\.?|[IVXLC]{1,5}\.|[A-Z]\.|(?:Chapter|Part|Section|Schedule|Appendix|Annex)\s+[\w.]+)(?:\s+|:\s*|$)"
)
_CONTACT = re.compile(
    r"""(
        \b(?:phone|ph|tel|telephone|fax|mobile|mob|email|e-mail|web|abn|acn|gst|vat)\b\s*[:.#]?\s*\S
      | [\w.+-]+@[\w-]+\.[\w.]+                       # an email address
      | \bwww\.|https?://|\.(?:com|org|net|gov|edu|au|uk)\b
      | \(?\+?\d{1,4}\)?[\s.-]?\d{3,4}[\s.-]\d{3,4}\b  # a phone number
      | \bp\.?\s?o\.?\s+box\b
      | ^\d+[A-Za-z]?(?:[-/]\d+)?\s+(?:[A-Z][\w']*\s+){1,4}
        (?:street|st|road|rd|avenue|ave|drive|dr|lane|ln|boulevard|blvd|way|court|ct|place|pl|highway|hwy
           |parade|pde|terrace|tce|crescent|cres|square|sq|close|parkway|pkwy)\b\.?
      | ,\s*[A-Z]{2,3}\s+\d{4,5}(?:-\d{4})?\b        # ', WA 98052', ', NSW 2000'
    )""",
    re.I | re.X,
)
_NOT_HEADING = re.compile(
    r"""(
        [$€£¥]\s?\d | \d\s?(?:%|USD|AUD|EUR|GBP)\b        # amounts
      | \b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b | \b\d{4}-\d{2}-\d{2}\b   # dates
      | \b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b                  # 9,800  12,500.00
      | \b[A-Z]{1,6}[-/]?\d{3,}[\w/-]*\b | \#\s*\d | \bno\.\s*\d  # codes: RO-20221108, SKU-8847, # 12
      | \b(?:id|ref|reference|invoice|order|account|acct|claim|policy|odometer|page)
        \s*(?:\#|no\.?|number)?\s*:?\s*\d
    )""",
    re.I | re.X,
)


# 'Site contact: Jo Park': a short label, its colon, then the value.
_LABEL_VALUE = re.compile(r"^[^:]{1,40}:\s+\S")


def is_contact(text: str) -> bool:
    """An address, phone, email or web line: what marks a letterhead."""
    return bool(_CONTACT.search(text))


def is_label(text: str) -> bool:
    """A label with its value ('Site contact: Jo Park'), not counting a numbered heading's colon
    ('Appendix B: Data'): set bold at body size, it is a form's field, not a heading. Set larger, a
    colon more often parts a title from its subtitle, so the caller asks only of body-size lines."""
    return bool(_LABEL_VALUE.match(_NUMBERING.sub("", " ".join(text.split()), count=1)))


def reads_as_heading(text: str) -> bool:
    text = " ".join(text.split())
    if len(text) > 100 or not re.search(r"[A-Za-z]{2}", text):
        return False
    rest = _NUMBERING.sub("", text, count=1)
    if len(rest.split()) > MAX_WORDS or text.endswith((".", ",", ";")) and not text.endswith("..."):
        return False
    if is_contact(rest) or _NOT_HEADING.search(rest):
        return False
    # A year is part of many a heading ('Annual report 2024'); other figures make a line a value.
    chars = [c for c in _YEAR.sub("", rest) if not c.isspace()]
    digits = sum(c.isdigit() for c in chars)
    return digits <= 0.15 * len(chars)
