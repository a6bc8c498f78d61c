"""Text that XML 1.0, and so a Word file, can carry.

XML 1.0 has no way to write the C0 control characters other than tab, newline and carriage return, nor
U+FFFE and U+FFFF (and a lone surrogate cannot even be encoded): lxml refuses them, so a Word file or
an XML part holding one cannot be written. A document's Markdown may hold them (it is the user's text, as
uploaded or proposed), so every writer passes its text through `safe` first: each C0 control becomes its
visible Control Pictures sign (U+0001 → U+2401 "␁", U+001B → U+241B "␛"), anything else unsafe the
replacement character U+FFFD. One character for one, so line and column positions stay where they were.
The HTML of the share page uses the same mapping: browsers would show nothing, or a box, for these."""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_CONTROL_PICTURES = 0x2400


def _visible(found: re.Match[str]) -> str:
    code = ord(found.group())
    return chr(_CONTROL_PICTURES + code) if code < 0x20 else "\ufffd"


def safe(text: str) -> str:
    """`text` with every character XML 1.0 cannot carry replaced by a visible one (see the module)."""
    return _UNSAFE.sub(_visible, text)


def unsafe_count(text: str) -> int:
    """How many characters of `text` `safe` replaces."""
    return sum(1 for _ in _UNSAFE.finditer(text))
