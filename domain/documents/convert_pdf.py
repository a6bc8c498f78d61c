"""PDF → Markdown with pypdf: text in reading order, headings from font size and weight, tables where
the layout shows columns.

pypdf's visitor reports every text run with its matrix and font; runs are placed on the page, grouped
into lines (top to bottom, left to right), lines into cells where a wide horizontal gap separates them.
Runs of consecutive multi-cell lines become Markdown tables (columns clustered by x position); the
rest become paragraphs, headings where the font is clearly larger than the body text or bold."""

from __future__ import annotations

import io
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypdf import PageObject, PdfReader
from pypdf.errors import FileNotDecryptedError, PdfReadError

from domain.documents.errors import ConversionError

MAX_PAGES = 2_000
_BULLET = re.compile(r"^([•▪●◦‣·∙\-–*])\s+(.*)$")
_NUMBERED = re.compile(r"^(\d{1,3})[.)]\s+(.*[A-Za-z].*)$")
_BOLD = re.compile(r"bold|black|heavy|semibold|demi|medi|,b$", re.I)


@dataclass
class Run:
    x: float
    y: float
    size: float
    bold: bool
    text: str

    @property
    def end(self) -> float:
        return self.x + len(self.text) * self.size * 0.5


@dataclass
class Line:
    y: float
    size: float
    bold: bool
    cells: list[list[Run]] = field(default_factory=list)

    def cell_texts(self) -> list[str]:
        return [_join(c) for c in self.cells]

    @property
    def text(self) -> str:
        return " ".join(self.cell_texts())

    @property
    def x(self) -> float:
        return self.cells[0][0].x


def _join(runs: list[Run]) -> str:
    out = ""
    for r in runs:
        t = r.text
        if out and not out.endswith((" ", "-")) and not t.startswith(" "):
            out += " " if r.x - 1 > runs[0].x else ""
        out += t
    return " ".join(out.split())


def _runs(page: PageObject) -> list[Run]:
    runs: list[Run] = []

    def visit(text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:
        """pypdf's text visitor: font is the font's resource dictionary, when the page names one."""
        if not text or not text.strip():
            return
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        scale = abs(tm[3] or tm[0] or 1) * abs(cm[3] or cm[0] or 1)
        name = str(font.get("/BaseFont", "")) if isinstance(font, dict) else ""
        for i, part in enumerate(text.split("\n")):
            if part.strip():
                runs.append(
                    Run(x, y - i * size * scale * 1.2, round(size * scale, 1), bool(_BOLD.search(name)), part)
                )

    page.extract_text(visitor_text=visit)
    return runs


def _lines(runs: list[Run]) -> list[Line]:
    runs = sorted(runs, key=lambda r: (-r.y, r.x))
    lines: list[list[Run]] = []
    for r in runs:
        if lines and abs(lines[-1][0].y - r.y) <= max(2.0, 0.45 * r.size):
            lines[-1].append(r)
        else:
            lines.append([r])
    out: list[Line] = []
    for group in lines:
        group.sort(key=lambda r: r.x)
        main = max(group, key=lambda r: len(r.text.strip()))
        line = Line(y=group[0].y, size=main.size, bold=all(r.bold for r in group if r.text.strip()))
        for r in group:
            if line.cells and r.x - line.cells[-1][-1].end <= max(2.2 * r.size, 14):
                line.cells[-1].append(r)
            else:
                line.cells.append([r])
        out.append(line)
    return out


def _columns(block: list[Line]) -> list[float]:
    xs = sorted(cell[0].x for line in block for cell in line.cells)
    cols: list[list[float]] = []
    for x in xs:
        if cols and x - cols[-1][-1] <= 18:
            cols[-1].append(x)
        else:
            cols.append([x])
    return [sum(c) / len(c) for c in cols]


def _table(block: list[Line]) -> str:
    cols = _columns(block)
    rows: list[list[str]] = []
    for line in block:
        row = [""] * len(cols)
        for cell in line.cells:
            i = min(range(len(cols)), key=lambda k: abs(cols[k] - cell[0].x))
            row[i] = (row[i] + " " + _join(cell)).strip()
        rows.append(row)

    def esc(cell: str) -> str:
        return cell.replace("|", "\\|")

    out = ["| " + " | ".join(esc(c) for c in rows[0]) + " |", "|" + " --- |" * len(cols)]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows[1:]]
    return "\n".join(out)


def _heading_levels(lines: list[Line], body: float) -> dict[float, int]:
    sizes = sorted({ln.size for ln in lines if ln.size >= body * 1.15 and len(ln.text) <= 150}, reverse=True)
    return {s: min(i + 1, 3) for i, s in enumerate(sizes)}


def _render(lines: list[Line], body: float, levels: dict[float, int]) -> list[str]:
    blocks: list[str] = []
    para: list[str] = []
    prev: Line | None = None

    def flush() -> None:
        if para:
            text = ""
            for part in para:
                if text.endswith("-") and part[:1].islower():
                    text = text[:-1] + part
                else:
                    text = f"{text} {part}".strip()
            blocks.append(text)
            para.clear()

    i = 0
    while i < len(lines):
        ln = lines[i]
        if len(ln.cells) >= 2:
            j = i
            while j < len(lines) and len(lines[j].cells) >= 2:
                j += 1
            if j - i >= 2:
                flush()
                blocks.append(_table(lines[i:j]))
                prev = lines[j - 1]
                i = j
                continue
        text = ln.text
        bullet, numbered = _BULLET.match(text), _NUMBERED.match(text)
        level = levels.get(ln.size)
        if (
            level is None
            and not numbered
            and ln.bold
            and ln.size >= body * 0.95
            and len(text) <= 80
            and not text.endswith((".", ","))
        ):
            level = min((max(levels.values()) + 1) if levels else 2, 4)
        if level is not None and re.search(r"[A-Za-z]", text):
            flush()
            blocks.append("#" * level + " " + text)
        elif bullet is not None:
            flush()
            para.append(f"- {bullet.group(2)}")
        elif numbered is not None:
            flush()
            para.append(f"{numbered.group(1)}. {numbered.group(2)}")
        else:
            gap = (prev.y - ln.y) if prev is not None else 0
            if para and (gap > ln.size * 1.9 or gap < 0):
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
        pages = [_lines(_runs(p)) for p in reader.pages]
    except ConversionError:
        raise
    except FileNotDecryptedError:
        raise ConversionError("the PDF is encrypted with a password", code="encrypted") from None
    except PdfReadError as exc:  # pypdf's own description of what is wrong with the file
        raise ConversionError(f"corrupt PDF: {exc}") from None
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, OSError):
        # pypdf tripped over the file's structure; its exception's text means nothing to the owner.
        raise ConversionError("corrupt PDF: its structure could not be read") from None
    all_lines = [ln for page in pages for ln in page]
    if not all_lines:
        return ""
    weights: Counter[float] = Counter()
    for ln in all_lines:
        weights[ln.size] += len(ln.text)
    body = weights.most_common(1)[0][0]
    levels = _heading_levels(all_lines, body)
    blocks: list[str] = []
    for page in pages:
        blocks.extend(_render(page, body, levels))
    return "\n\n".join(blocks).strip() + "\n"
