"""A DOCX chart's data as a Markdown table.

Word stores each chart in a part of its own (`word/charts/chartN.xml`, DrawingML charts) with the values
it last drew cached beside each series' spreadsheet reference: the categories (`c:cat`, or `c:xVal` for
a scatter chart) and the values (`c:val`, `c:yVal`) as `c:pt` points by index. The table has a row per
category and a column per series (its name from `c:tx`), preceded by the chart's title when it has one.
"""

from __future__ import annotations

from lxml import etree

C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
MAX_ROWS = 1000


def _c(name: str) -> str:
    return f"{{{C}}}{name}"


def _points(ref: etree._Element | None) -> dict[int, str]:
    """Cached points under a category or value reference (for a multi-level category, its first level)."""
    if ref is None:
        return {}
    level = ref.find(f".//{_c('lvl')}")
    holder = level if level is not None else ref
    out: dict[int, str] = {}
    for pt in holder.iter(_c("pt")):
        idx, v = pt.get("idx"), pt.find(_c("v"))
        if idx is not None and idx.isdigit() and v is not None:
            out[int(idx)] = " ".join((v.text or "").split())
    return out


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|")


def _title(root: etree._Element) -> str:
    title = root.find(f"{_c('chart')}/{_c('title')}")
    if title is None:
        return ""
    texts = [t.text or "" for t in title.iter(f"{{{A}}}t")] or [v.text or "" for v in title.iter(_c("v"))]
    return " ".join("".join(texts).split())


def to_markdown(root: etree._Element) -> str:
    """The chart's cached data as a Markdown table ('' when it caches none)."""
    plot = root.find(f"{_c('chart')}/{_c('plotArea')}")
    series = list(plot.iter(_c("ser"))) if plot is not None else []
    columns: list[tuple[str, dict[int, str]]] = []
    categories: dict[int, str] = {}
    scatter = False
    for n, ser in enumerate(series, 1):
        tx = ser.find(_c("tx"))
        name = ""
        if tx is not None:
            name = " ".join("".join(v.text or "" for v in tx.iter(_c("v"))).split())
        cat, val = ser.find(_c("cat")), ser.find(_c("val"))
        if val is None and ser.find(_c("yVal")) is not None:
            cat, val, scatter = ser.find(_c("xVal")), ser.find(_c("yVal")), True
        categories = categories or _points(cat)
        columns.append((name or f"Series {n}", _points(val)))
    indexes = sorted({*categories, *(i for _, values in columns for i in values)})[:MAX_ROWS]
    if not columns or not indexes:
        return ""
    head = ["X" if scatter else "Category", *(name for name, _ in columns)]
    lines = [
        "| " + " | ".join(_cell(h) for h in head) + " |",
        "|" + "---|" * len(head),
    ]
    for i in indexes:
        row = [categories.get(i, str(i + 1)), *(values.get(i, "") for _, values in columns)]
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    title = _title(root)
    return (f"*Chart: {_cell(title)}*\n\n" if title else "") + "\n".join(lines)
