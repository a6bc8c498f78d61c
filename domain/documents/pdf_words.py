"""Words split across PDF lines: is 'left-' + 'right' one word broken by a soft hyphen, or a compound that
keeps its hyphen?

The document itself is the best witness (the joined word, or the hyphenated compound, written elsewhere
in it); without one, a small list of words that commonly form hyphenated compounds decides, and a break
inside an unknown word is taken as a soft hyphen (typesetters break words at syllables, and the
fragments they leave, 'conver-' + 'sion', are not words)."""

from __future__ import annotations

import re

# First elements of common hyphenated compounds ('well-known', 'self-hosted', 'non-trivial').
LEFT_COMPOUND = frozenset(
    """all anti best bottom broad case chat close cold cost cross data decision deep double fast
    few fine first free front full general half hard high human large last left long low machine many
    mid middle multi next non old one open peer quasi real record right rule second self semi short
    single small state step task third three time tool top two user well wide world worst""".split()
)
# Second elements of common compounds ('data-driven', 'rule-based', 'open-source'); none is a fragment
# a word is commonly broken into.
RIGHT_COMPOUND = frozenset(
    """agent agents aware based bound centric class controlled defined driven existent facing free friendly
    grade hosted known level like looking making minded oriented owned powered quality related scale
    sensitive source specific standing wide world""".split()
)
_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")
_TAIL = re.compile(r"([A-Za-z]+)-$")
_HEAD = re.compile(r"^([A-Za-z]+)")


def vocabulary(text: str) -> tuple[set[str], set[str]]:
    """The document's words and its hyphenated compounds, lower-cased, as evidence for `join`."""
    words: set[str] = set()
    compounds: set[str] = set()
    for w in _WORD.findall(text):
        w = w.lower()
        (compounds if "-" in w else words).add(w)
    return words, compounds


def join(left: str, right: str, evidence: tuple[set[str], set[str]] | None = None) -> str:
    """`left` (a line ending in '-') followed by `right` (the next line), as one text."""
    if not left.endswith("-"):
        return f"{left} {right}".strip()
    tail, head = _TAIL.search(left), _HEAD.match(right)
    if tail is None or head is None or not head.group(1)[0].islower():
        # A number or range ('2020-' '2021'), a name ('Jean-' 'Paul'), a dash: the hyphen stays.
        return left + right
    a, b = tail.group(1).lower(), head.group(1).lower()
    words, compounds = evidence or (set(), set())
    if a + b in words:
        return left[:-1] + right
    if f"{a}-{b}" in compounds or a in LEFT_COMPOUND or b in RIGHT_COMPOUND:
        return left + right
    return left[:-1] + right
