"""PDF → Markdown with pypdf: text in reading order, its lines, columns and tables kept, headings where
type size or weight set a line apart and its words read as a heading.

pypdf's visitor reports every text run with its matrix and font; each run is placed on the page and
measured with its font's widths (pypdf's font metrics), runs are grouped into lines (top to bottom,
left to right) and lines into cells where a gap wider than a word space separates them.

- Columns: a page whose text leaves a vertical gutter, with prose on both sides, is read column by
  column (lines that cross the gutter, a title say, are read where they stand).
- Tables: runs of consecutive multi-cell lines; columns are the x-ranges their cells share, so a sparse
  table's empty cells stay empty instead of shifting the next value left.
- Lines: a line joins the paragraph above only when the line above was full (its next word would not have
  fitted) and no more space than the document's usual line pitch separates them; so a receipt's or a
  form's short lines each stay a line of their own. Text padded with spaces (a till's columns) is split
  at the padding. Page numbers, and running heads and feet (kept on the first page only), are dropped, so
  a paragraph runs on across a page break. A bullet or number set apart by a hanging indent starts a list
  item; consecutive items make one list.
- Headings: a line larger than the body text, or bold at body size and standing alone (and not a label
  with its value), that reads as a heading (domain/documents/pdf_headings.py); a letterhead (the top
  lines of a page with an address, phone or email among them) is never a heading; a bold line ending in a
  colon and standing alone is one ('Recommendations:').
- Hyphens at line ends: domain/documents/pdf_words.py decides between a soft break and a compound."""

from __future__ import annotations

import io
import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypdf import PageObject, PdfReader
from pypdf.errors import FileNotDecryptedError, PdfReadError
from pypdf.generic import DictionaryObject

from domain.documents import pdf_headings, pdf_words
from domain.documents.errors import ConversionError

try:  # pypdf's font metrics (widths per character); without them a width is estimated
    from pypdf.generic._font import Font as _Font
except ImportError:  # pragma: no cover - an older pypdf
    _Font = None  # type: ignore[assignment,misc]

MAX_PAGES = 2_000
CELL_GAP = 0.6  # em: wider than a word space (about 0.28 em), narrower than any column gutter seen
_BULLET = re.compile(r"^([•▪●◦‣·∙\-–*])\s+(.*)$")
_NUMBERED = re.compile(r"^(\d{1,3})[.)]\s+(.*[A-Za-z].*)$")
_BOLD = re.compile(r"bold|black|heavy|semibold|demi|,b$", re.I)
_MARKER = re.compile(r"^(?:[•▪●◦‣·∙\-–*]|\(?\d{1,3}[.)]|\(?[a-z][.)])$")
# 'Page 3', 'Page 3 of 12', '3 / 12', '- 3 -', '3'; not a year standing alone ('2024').
_PAGE_NUMBER = re.compile(
    r"^[-–\s]*(?:page\s+\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?|\d{1,3}(?:\s*(?:of|/)\s*\d{1,4})?)[-–\s]*$", re.I
)
_ITEM = re.compile(r"^(?:- |\d{1,3}\. )")
_STRETCH = re.compile(r"\S+(?: \S+)*")  # text up to a run of two or more spaces


@dataclass
class Run:
    x: float
    y: float
    w: float
    size: float
    bold: bool
    text: str
    font: str = ""

    @property
    def end(self) -> float:
        return self.x + self.w


@dataclass
class Line:
    y: float
    size: float
    bold: bool
    cells: list[list[Run]] = field(default_factory=list)
    right: float = 0.0  # the right edge of the text block (column) the line is in
    letterhead: bool = False
    ragged: bool = False  # no right margin found in the line's block
    pitch: float = 0.0  # the usual distance between lines of this size in the document
    page: int = 0

    def cell_texts(self) -> list[str]:
        return [_join(c) for c in self.cells]

    @property
    def text(self) -> str:
        return " ".join(self.cell_texts())

    @property
    def x(self) -> float:
        return self.cells[0][0].x

    @property
    def end(self) -> float:
        return max(r.end for r in self.cells[-1])

    @property
    def runs(self) -> list[Run]:
        return [r for c in self.cells for r in c]

    def first_word_width(self) -> float:
        run = self.cells[0][0]
        word = run.text.split()[0] if run.text.split() else run.text
        return run.w * len(word) / max(len(run.text), 1)


def _join(runs: list[Run]) -> str:
    out = ""
    prev: Run | None = None
    for r in runs:
        t = r.text
        if prev is not None and not out.endswith(" ") and not t.startswith(" "):
            # Runs that touch are one word ('Ex' 'ample'); a gap of a space or more separates words. A
            # long run's measured end is off by a few per cent (justified spacing, kerning), so after one
            # the runs are taken as separate words.
            # A change of font is taken as a word boundary too (its widths may be the ones off).
            gap = r.x - prev.end
            joined = t[:1] in ",.;:)!?" or out.endswith("(")
            out += " " if gap > 0.15 * r.size - 0.03 * prev.w or (r.font != prev.font and not joined) else ""
        out += t
        prev = r
    return " ".join(out.split())


class _Widths:
    """Text widths per font resource, from pypdf's metrics of that font (cached by the resource)."""

    def __init__(self) -> None:
        self.fonts: dict[object, Any] = {}

    def width(self, font: Any, text: str, size: float) -> float:
        metrics = None
        if _Font is not None and isinstance(font, DictionaryObject):
            ref = font.indirect_reference  # pages share their fonts: measured once per document
            key = (ref.idnum, ref.generation) if ref is not None else id(font)
            if key not in self.fonts:
                try:
                    self.fonts[key] = _Font.from_font_resource(font)
                except Exception:  # metrics are a refinement: any trouble falls back to the estimate
                    self.fonts[key] = None
            metrics = self.fonts[key]
        if metrics is not None:
            try:
                return float(metrics.get_text_width(text)) * size / 1000
            except Exception:
                pass
        return len(text) * size * 0.5


def _runs(page: PageObject, widths: _Widths) -> list[Run]:
    runs: list[Run] = []
    origin = [float("nan"), float("nan")]  # where the last run was reported to start

    def visit(text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:
        """pypdf's text visitor: font is the font's resource dictionary, when the page names one."""
        if not text or not text.strip():
            return
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        if runs and (x, y) == (origin[0], origin[1]) and "\n" not in text.rstrip("\n"):
            # pypdf reports a text object's start for every run drawn without moving to a new position
            # (a bold label, then its value): the run follows the one before.
            x = runs[-1].end
        else:
            origin[0], origin[1] = x, y
        scale = abs(tm[3] or tm[0] or 1) * abs(cm[3] or cm[0] or 1)
        name = str(font.get("/BaseFont", "")) if isinstance(font, dict) else ""
        bold = bool(_BOLD.search(name))
        for i, line in enumerate(text.split("\n")):
            # Spaces move text right (a till pads its columns with them): each stretch of text between
            # two or more spaces is placed and measured on its own, so padded columns become cells.
            for found in _STRETCH.finditer(line):
                x0 = x + widths.width(font, line[: found.start()], size * scale) if found.start() else x
                w = widths.width(font, found.group(), size * scale)
                runs.append(
                    Run(x0, y - i * size * scale * 1.2, w, round(size * scale, 1), bold, found.group(), name)
                )

    page.extract_text(visitor_text=visit)
    return runs


def _lines(runs: list[Run]) -> list[Line]:
    runs = sorted(runs, key=lambda r: (-r.y, r.x))
    groups: list[list[Run]] = []
    for r in runs:
        if groups and abs(groups[-1][0].y - r.y) <= max(2.0, 0.45 * r.size):
            groups[-1].append(r)
        else:
            groups.append([r])
    out: list[Line] = []
    for group in groups:
        group.sort(key=lambda r: r.x)
        main = max(group, key=lambda r: len(r.text))
        line = Line(y=group[0].y, size=main.size, bold=all(r.bold for r in group))
        for r in group:
            if line.cells and r.x - line.cells[-1][-1].end <= CELL_GAP * r.size + 0.03 * line.cells[-1][-1].w:
                line.cells[-1].append(r)
            else:
                line.cells.append([r])
        if len(line.cells) >= 2 and _MARKER.match(_join(line.cells[0])):
            # A bullet or list number set apart from its text (a hanging indent) belongs to the text.
            line.cells[0:2] = [line.cells[0] + line.cells[1]]
        out.append(line)
    return out


# Reading order: columns -----------------------------------------------------------------------------


def _gutter(lines: list[Line]) -> tuple[float, float] | None:
    """An x-range that (almost) no line crosses, with prose on both sides of it: the gap between two
    columns of text. None when the lines are one column (or a table, whose cells are short)."""
    if len(lines) < 6:
        return None
    left = min(ln.x for ln in lines)
    right = max(ln.end for ln in lines)
    width = right - left
    if width <= 0:
        return None
    step = 2.0
    buckets = int(width / step) + 1
    delta = [0] * (buckets + 1)  # runs starting and ending per bucket; summed up below
    for ln in lines:
        for r in ln.runs:
            if r.w > 0.55 * width:
                continue  # a line across both columns (a title, a caption) is read where it stands
            delta[max(int((r.x - left) / step), 0)] += 1
            delta[min(int((r.end - left) / step) + 1, buckets)] -= 1
    cover = list(itertools.accumulate(delta[:buckets]))
    allowed = 0
    lo, hi = int(0.2 * buckets), int(0.8 * buckets)
    best: tuple[float, float] | None = None
    b = lo
    while b < hi:
        if cover[b] > allowed:
            b += 1
            continue
        start = b
        while b < hi and cover[b] <= allowed:
            b += 1
        g0, g1 = left + start * step, left + b * step
        size = Counter(ln.size for ln in lines).most_common(1)[0][0]
        if g1 - g0 >= 0.8 * size and _prose_both_sides(lines, g0, g1):
            if best is None or g1 - g0 > best[1] - best[0]:
                best = (g0, g1)
    return best


def _prose_both_sides(lines: list[Line], g0: float, g1: float) -> bool:
    sides: tuple[list[str], list[str]] = ([], [])
    for ln in lines:
        lt = " ".join(r.text for r in ln.runs if r.end <= g0 + 1)
        rt = " ".join(r.text for r in ln.runs if r.x >= g1 - 1)
        if lt:
            sides[0].append(lt)
        if rt:
            sides[1].append(rt)
    for side in sides:
        if len(side) < 4:
            return False
        long = [t for t in side if len(t) >= 25 and len(t.split()) >= 4]
        if len(long) < 0.5 * len(side):
            return False
    return True


def _reading_order(lines: list[Line], depth: int = 0) -> list[Line]:
    """The lines in reading order: a region of two columns is read left column first; each line gets
    the right edge of the block it is in (what tells a full line from a short one)."""
    gutter = _gutter(lines) if depth < 3 else None
    if gutter is None:
        _merge_unaligned(lines)
        singles = [ln for ln in lines if len(ln.cells) == 1]
        edge = max((ln.end for ln in singles), default=0.0)
        left = min((ln.x for ln in singles), default=0.0)
        # The edge is a margin only when more than one line reaches it; otherwise the lines are ragged
        # (a receipt, a form) and one of them merely happens to be the longest.
        near = sum(ln.end >= edge - max(0.03 * (edge - left), ln.size) for ln in singles)
        for ln in lines:
            ln.right = edge or ln.end
            ln.ragged = near < max(2, 0.3 * len(singles))
        return lines
    g0, g1 = gutter
    out: list[Line] = []
    pending: list[Run] = []

    def flush() -> None:
        if pending:
            lefts = _lines([r for r in pending if r.end <= g0 + 1])
            rights = _lines([r for r in pending if r.x >= g1 - 1])
            out.extend(_reading_order(lefts, depth + 1) if lefts else [])
            out.extend(_reading_order(rights, depth + 1) if rights else [])
            pending.clear()

    for ln in lines:
        if any(r.x < g1 - 1 and r.end > g0 + 1 for r in ln.runs):
            flush()  # a line across the gutter (a title, a full-width figure caption) stands where it is
            ln.right = max(ln.end, ln.right)
            out.append(ln)
        else:
            pending.extend(ln.runs)
    flush()
    return out


def _drop_running_lines(pages: list[list[Line]]) -> None:
    """Page numbers, and running heads and feet (a line at the top or bottom of two pages or more, numbers
    aside): they only say where the reader is, and dropping them lets a paragraph run on across the page
    break. A repeated line on the first page is kept there: a letterhead printed on every page."""

    def key(ln: Line) -> str:
        return re.sub(r"\d+", "#", ln.text.lower())

    def edges(page: list[Line]) -> list[Line]:
        return [ln for k, ln in enumerate(page) if k < 2 or k >= len(page) - 2]

    counts: Counter[str] = Counter()
    for page in pages:
        counts.update({key(ln) for ln in edges(page) if len(ln.cells) == 1})
    for number, page in enumerate(pages):
        drop: set[int] = set()
        for ln in edges(page):
            if _PAGE_NUMBER.match(ln.text):
                drop.add(id(ln))
            elif number > 0 and len(ln.cells) == 1 and len(ln.text) <= 80 and counts[key(ln)] >= 2:
                drop.add(id(ln))
        page[:] = [ln for ln in page if id(ln) not in drop]


# Tables -----------------------------------------------------------------------------------------------


def _columns(block: list[Line]) -> list[tuple[float, float]]:
    """Column x-ranges: the ranges the cells' spans overlap in, narrow cells first (so that one wide cell
    spanning two columns does not merge them)."""
    cells = sorted(
        ((c[0].x, max(r.end for r in c)) for line in block for c in line.cells), key=lambda s: s[1] - s[0]
    )
    cols: list[list[float]] = []
    for x0, x1 in cells:
        hits = [c for c in cols if x0 < c[1] + 1 and x1 > c[0] - 1]
        if not hits:
            cols.append([x0, x1])
        elif len(hits) == 1:
            hits[0][0], hits[0][1] = min(hits[0][0], x0), max(hits[0][1], x1)
    cols.sort()
    merged: list[list[float]] = []
    for c in cols:
        if merged and c[0] < merged[-1][1] - 1:
            merged[-1][1] = max(merged[-1][1], c[1])
        else:
            merged.append(c)
    return [(a, b) for a, b in merged]


def _overlaps(cols: list[tuple[float, float]], cell: list[Run]) -> list[float]:
    x0, x1 = cell[0].x, max(r.end for r in cell)
    return [min(b, x1) - max(a, x0) for a, b in cols]


def _table_end(lines: list[Line], i: int) -> int:
    """Where the table starting at line i ends: multi-cell lines, and right below one a single cell
    starting where a column other than the first starts (a cell's text wrapped onto a second line; a line
    at the table's left edge is a note or a heading between two tables)."""
    j = i
    while j < len(lines):
        if len(lines[j].cells) >= 2:
            j += 1
            continue
        ln, above = lines[j], lines[j - 1]
        if j > i and ln.page == above.page and 0 < above.y - ln.y < 2 * above.size:
            more = j + 1 < len(lines) and len(lines[j + 1].cells) >= 2
            cols = _columns([x for x in lines[i : j + 2] if len(x.cells) >= 2])
            cell = ln.cells[0]
            starts = [k for k, (a, _) in enumerate(cols) if abs(a - cell[0].x) <= 2]
            if starts and starts[0] > 0 and (more or len(cols) > 2):
                j += 1
                continue
        break
    return j


def _aligned(block: list[Line]) -> bool:
    """Whether the cells line up as a table's do: most cells after a row's first start or end where a
    cell of another row does (a justified paragraph drawn word by word has wide gaps, not columns)."""
    rows = [[(c[0].x, max(r.end for r in c)) for c in ln.cells] for ln in block if len(ln.cells) >= 2]
    hits = total = 0
    for i, row in enumerate(rows):
        others = [span for k, other in enumerate(rows) if k != i for span in other]
        for x0, x1 in row[1:]:
            total += 1
            hits += any(abs(x0 - a) <= 2 or abs(x1 - b) <= 2 for a, b in others)
    if total == 0 or hits < 0.6 * total:
        return False
    # And the edges fall on few positions (a table's columns), not on nearly as many as there are
    # cells (words spread over a justified line line up with some other word now and then).
    cells = [span for row in rows for span in row]
    return min(_positions([a for a, _ in cells]), _positions([b for _, b in cells])) <= 0.6 * len(cells)


def _positions(xs: list[float]) -> int:
    """How many distinct positions (within 2 pt of the previous one) the values fall on."""
    xs = sorted(xs)
    return sum(1 for k, x in enumerate(xs) if k == 0 or x - xs[k - 1] > 2)


def _merge_unaligned(lines: list[Line]) -> None:
    """Consecutive multi-cell lines whose cells do not line up are text set with wide gaps (justified
    word by word), and a lone line whose gaps are narrow is text with a list number or a footnote mark
    set apart: each becomes one cell again. (A lone label and its value far to the right stay apart.)"""
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and len(lines[j].cells) >= 2:
            j += 1
        if j - i >= 2 and not _aligned(lines[i:j]):
            for ln in lines[i:j]:
                ln.cells = [ln.runs]
        elif j - i == 1:
            ln = lines[i]
            gaps = [b[0].x - a[-1].end for a, b in zip(ln.cells, ln.cells[1:], strict=False)]
            if max(gaps) < 2.5 * ln.size:
                ln.cells = [ln.runs]
        i = max(j, i + 1)


def _table(block: list[Line]) -> str:
    cols = _columns([ln for ln in block if len(ln.cells) >= 2])
    rows: list[list[str]] = []
    for line in block:
        row = [""] * len(cols)
        for cell in line.cells:
            overlap = _overlaps(cols, cell)
            i = max(range(len(cols)), key=overlap.__getitem__)
            row[i] = (row[i] + " " + _join(cell)).strip()
        if len(line.cells) == 1 and rows:  # a wrapped cell: its second line joins the row above
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], row, strict=True)]
        else:
            rows.append(row)

    def esc(cell: str) -> str:
        return cell.replace("|", "\\|")

    out = ["| " + " | ".join(esc(c) for c in rows[0]) + " |", "|" + " --- |" * len(cols)]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows[1:]]
    return "\n".join(out)


# Headings ---------------------------------------------------------------------------------------------


def _mark_letterhead(lines: list[Line]) -> None:
    """The top lines of a page, down to its last address, phone or email line among the first few, are a
    letterhead: a company's name set large is not a heading of the document. A longer line among them
    (more than six words, no contact details) is a title with its authors' addresses below, as a paper's
    first page has: it stays free to be a heading."""
    top = lines[:8]
    last = max((i for i, ln in enumerate(top) if pdf_headings.is_contact(ln.text)), default=-1)
    for ln in top[: last + 1]:
        ln.letterhead = len(ln.text.split()) <= 6 or pdf_headings.is_contact(ln.text)


def _heading_levels(lines: list[Line], body: float) -> dict[float, int]:
    sizes = sorted(
        {
            ln.size
            for ln in lines
            if ln.size >= body * 1.15 and not ln.letterhead and pdf_headings.reads_as_heading(ln.text)
        },
        reverse=True,
    )
    # Sizes within 10% of a level's largest are that level: pages set at slightly different scales
    # (one 10.1 pt, the next 11 pt) keep their headings' levels.
    levels: dict[float, int] = {}
    top = 0.0
    for s in sizes:
        if not levels:
            top, levels[s] = s, 1
        elif s >= top / 1.1:
            levels[s] = levels[top]
        else:
            top, levels[s] = s, min(levels[top] + 1, 3)
    return levels


def _stands_alone(lines: list[Line], i: int) -> bool:
    """A bold line at body size is a heading only when it is not part of a bold paragraph or a row."""
    ln = lines[i]
    if len(ln.cells) > 1:
        return False
    nxt = lines[i + 1] if i + 1 < len(lines) else None
    return nxt is None or not (nxt.bold and nxt.size == ln.size and 0 < ln.y - nxt.y < 1.6 * ln.size)


# Rendering --------------------------------------------------------------------------------------------


def _set_pitch(lines: list[Line]) -> None:
    """Each line's usual line pitch: the median distance between consecutive lines of its size."""
    gaps: dict[float, list[float]] = {}
    for a, b in zip(lines, lines[1:], strict=False):
        if a.page == b.page and a.size == b.size and 0 < a.y - b.y < 3 * a.size:
            gaps.setdefault(a.size, []).append(a.y - b.y)
    pitch = {size: sorted(g)[len(g) // 2] for size, g in gaps.items()}
    for ln in lines:
        ln.pitch = pitch.get(ln.size, 0.0)


def _wrapped(prev: Line, ln: Line) -> bool:
    """Whether `ln` continues `prev`'s paragraph: same type, the usual line spacing, and `prev` full (its
    first word would not have fitted at the end of `prev`)."""
    gap = prev.y - ln.y
    if abs(prev.size - ln.size) > 0.5:
        return False
    if ln.page != prev.page:  # a paragraph runs on to the next page: a full line, then lower case
        gap = prev.size if ln.text[:1].islower() else -1
    if gap <= 0 or gap > 1.9 * max(prev.size, ln.size) or gap > 1.3 * prev.pitch > 0:
        return False  # more space than between the lines of a paragraph: a new one
    if prev.bold != ln.bold or len(prev.cells) > 1 or len(ln.cells) > 1:
        return False
    room = prev.right - prev.end
    if prev.ragged and not ln.text[:1].islower():
        return False
    if room < ln.first_word_width() + 0.6 * ln.size:
        return True
    # Measured widths are a few per cent off in some fonts: a line ending near the block's edge and
    # followed by lower case is taken as wrapped too.
    return room < 0.15 * (prev.right - prev.x) and ln.text[:1].islower()


def _render(
    lines: list[Line], body: float, levels: dict[float, int], evidence: tuple[set[str], set[str]]
) -> list[str]:
    blocks: list[str] = []
    para: list[str] = []
    prev: Line | None = None

    def flush() -> None:
        if para:
            text = ""
            for part in para:
                text = pdf_words.join(text, part, evidence) if text else part
            blocks.append(text)
            para.clear()

    i = 0
    while i < len(lines):
        ln = lines[i]
        if len(ln.cells) >= 2:
            j = _table_end(lines, i)
            if j - i >= 2:
                flush()
                blocks.append(_table(lines[i:j]))
                prev = lines[j - 1]
                i = j
                continue
        text = ln.text
        bullet, numbered = _BULLET.match(text), _NUMBERED.match(text)
        level = None
        if not ln.letterhead and pdf_headings.reads_as_heading(text):
            level = levels.get(ln.size)
            if (
                level is None
                and ln.bold
                and ln.size >= 0.9 * body
                and _stands_alone(lines, i)
                and not pdf_headings.is_label(text)
            ):
                level = min((max(levels.values()) + 1) if levels else 2, 4)
        if level is not None:
            flush()
            blocks.append("#" * level + " " + text)
        elif bullet is not None:
            flush()
            para.append(f"- {bullet.group(2)}")
        elif numbered is not None and not (prev is not None and para and _wrapped(prev, ln)):
            flush()
            para.append(f"{numbered.group(1)}. {numbered.group(2)}")
        else:
            if para and (prev is None or not _wrapped(prev, ln)):
                flush()
            para.append(text)
        prev = ln
        i += 1
    flush()
    return blocks


def convert(data: bytes | Path) -> str:
    """A PDF's Markdown; from a path, pypdf reads the objects from the file as it needs them."""
    try:
        reader = PdfReader(data if isinstance(data, Path) else io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                if not reader.decrypt(""):
                    raise ConversionError("the PDF is encrypted with a password", code="encrypted")
            except (NotImplementedError, FileNotDecryptedError):
                raise ConversionError("the PDF is encrypted with a password", code="encrypted") from None
        n = len(reader.pages)
        if n > MAX_PAGES:
            raise ConversionError(
                f"the PDF has {n} pages; at most {MAX_PAGES} are converted", code="too_large"
            )
        widths = _Widths()
        pages = [_lines(_runs(p, widths)) for p in reader.pages]
        _drop_running_lines(pages)  # before the reading order: its lines are the page's top and foot
    except ConversionError:
        raise
    except FileNotDecryptedError:
        raise ConversionError("the PDF is encrypted with a password", code="encrypted") from None
    except PdfReadError as exc:  # pypdf's own description of what is wrong with the file
        raise ConversionError(f"corrupt PDF: {exc}") from None
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, OSError):
        # pypdf tripped over the file's structure; its exception's text means nothing to the owner.
        raise ConversionError("corrupt PDF: its structure could not be read") from None
    pages = [_reading_order(page) for page in pages if page]
    all_lines = [ln for page in pages for ln in page]
    if not all_lines:
        return ""
    for number, page in enumerate(pages):
        _mark_letterhead(page)
        for ln in page:
            ln.page = number
    weights: Counter[float] = Counter()
    for ln in all_lines:
        weights[ln.size] += len(ln.text)
    body = weights.most_common(1)[0][0]
    levels = _heading_levels(all_lines, body)
    _set_pitch(all_lines)
    evidence = pdf_words.vocabulary("\n".join(ln.text for ln in all_lines))
    parts: list[str] = []
    item = False
    for block in _render(all_lines, body, levels, evidence):
        # Consecutive list items make one (tight) list; every other block is a paragraph of its own.
        was, item = item, bool(_ITEM.match(block))
        parts += [("\n" if was and item else "\n\n") if parts else "", block]
    return "".join(parts).strip() + "\n"
