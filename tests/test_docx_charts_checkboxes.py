"""The DOCX conversion keeps what docling loses (issue 34): a chart's data, read from the chart part's
cached categories and values, becomes a Markdown table in the chart's place; content-control and legacy
form checkboxes become `- [x]` / `- [ ]` task items. Every file is built here."""

from __future__ import annotations

import io
from typing import Any

import docx
from docx.oxml import parse_xml
from lxml import etree

from domain.documents import convert_docx

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
W14 = "http://schemas.microsoft.com/office/word/2010/wordml"
C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"


def _series(n: int, name: str, cats: list[str], values: list[str], *, numeric_cats: bool = False) -> str:
    cache = "numCache" if numeric_cats else "strCache"
    ref = "numRef" if numeric_cats else "strRef"
    cat_pts = "".join(f'<c:pt idx="{i}"><c:v>{c}</c:v></c:pt>' for i, c in enumerate(cats))
    val_pts = "".join(f'<c:pt idx="{i}"><c:v>{v}</c:v></c:pt>' for i, v in enumerate(values) if v)
    return (
        f'<c:ser><c:idx val="{n}"/><c:order val="{n}"/>'
        f'<c:tx><c:strRef><c:f>Sheet1!$B$1</c:f><c:strCache><c:ptCount val="1"/>'
        f'<c:pt idx="0"><c:v>{name}</c:v></c:pt></c:strCache></c:strRef></c:tx>'
        f'<c:cat><c:{ref}><c:f>Sheet1!$A$2:$A$9</c:f><c:{cache}><c:ptCount val="{len(cats)}"/>'
        f"{cat_pts}</c:{cache}></c:{ref}></c:cat>"
        f"<c:val><c:numRef><c:f>Sheet1!$B$2:$B$9</c:f><c:numCache><c:formatCode>General</c:formatCode>"
        f'<c:ptCount val="{len(values)}"/>{val_pts}</c:numCache></c:numRef></c:val></c:ser>'
    )


def chart_xml(title: str | None, series: str) -> str:
    heading = (
        f"<c:title><c:tx><c:rich><a:bodyPr/><a:p><a:r><a:t>{title}</a:t></a:r></a:p></c:rich></c:tx></c:title>"
        if title
        else ""
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        f'<c:chartSpace xmlns:c="{C}" xmlns:a="{A}" xmlns:r="{R}"><c:chart>{heading}'
        f'<c:plotArea><c:layout/><c:barChart><c:barDir val="col"/>{series}</c:barChart></c:plotArea>'
        f"</c:chart></c:chartSpace>"
    )


def _drawing(rid: str) -> str:
    return (
        f'<w:r xmlns:w="{W}"><w:drawing><wp:inline xmlns:wp="{WP}"><wp:extent cx="5486400" cy="3200400"/>'
        f'<wp:docPr id="1" name="Chart 1"/><a:graphic xmlns:a="{A}"><a:graphicData uri="{C}">'
        f'<c:chart xmlns:c="{C}" xmlns:r="{R}" r:id="{rid}"/></a:graphicData></a:graphic></wp:inline>'
        f"</w:drawing></w:r>"
    )


def docx_with_charts(charts: list[str]) -> bytes:
    """A document with a paragraph before and after each chart (charts: chart part XML)."""
    document = docx.Document()
    document.add_heading("Results", level=1)
    rids = []
    for n, xml in enumerate(charts, 1):
        document.add_paragraph(f"Before chart {n}.")
        from docx.opc.packuri import PackURI
        from docx.opc.part import Part

        part = Part(
            PackURI(f"/word/charts/chart{n}.xml"),
            "application/vnd.openxmlformats-officedocument.drawingml.chart+xml",
            xml.encode(),
            document.part.package,
        )
        rid = document.part.relate_to(part, f"{R}/chart")
        rids.append(rid)
        p = document.add_paragraph()
        paragraph: Any = p._p  # python-docx types its children as paragraphs; a run goes in here
        paragraph.append(etree.fromstring(_drawing(rid)))
        document.add_paragraph(f"After chart {n}.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_a_chart_becomes_a_table_of_its_cached_data():
    cats = ["North", "South", "East"]
    series = _series(0, "2030", cats, ["12", "7.5", "3"]) + _series(1, "2031", cats, ["14", "", "4|5"])
    md = convert_docx.convert(docx_with_charts([chart_xml("Widgets sold", series)]))
    assert (
        "Before chart 1.\n\n*Chart: Widgets sold*\n\n"
        "| Category | 2030 | 2031 |\n|---|---|---|\n"
        "| North | 12 | 14 |\n| South | 7.5 |  |\n| East | 3 | 4\\|5 |\n\nAfter chart 1."
    ) in md


def test_charts_without_title_or_names_and_numeric_categories_keep_their_order():
    first = chart_xml(None, _series(0, "", ["2029", "2030"], ["1", "2"], numeric_cats=True))
    second = chart_xml("Second", _series(0, "Count", ["a"], ["9"]))
    md = convert_docx.convert(docx_with_charts([first, second]))
    one = "| Category | Series 1 |\n|---|---|\n| 2029 | 1 |\n| 2030 | 2 |"
    two = "*Chart: Second*\n\n| Category | Count |\n|---|---|\n| a | 9 |"
    assert one in md
    assert two in md
    assert md.index(one) < md.index("After chart 1.") < md.index(two)


def test_a_chart_with_no_cached_data_leaves_no_trace():
    md = convert_docx.convert(docx_with_charts([chart_xml("Empty", "")]))
    assert "CONCORDCHART" not in md
    assert "Before chart 1.\n\nAfter chart 1." in md


def _content_control(checked: bool, label: str) -> str:
    glyph = "\u2612" if checked else "\u2610"
    return (
        f'<w:p xmlns:w="{W}" xmlns:w14="{W14}"><w:sdt><w:sdtPr><w14:checkbox>'
        f'<w14:checked w14:val="{1 if checked else 0}"/></w14:checkbox></w:sdtPr>'
        f"<w:sdtContent><w:r><w:t>{glyph}</w:t></w:r></w:sdtContent></w:sdt>"
        f'<w:r><w:t xml:space="preserve"> {label}</w:t></w:r></w:p>'
    )


def _legacy(checked: bool, label: str) -> str:
    state = '<w:default w:val="1"/>' if checked else '<w:default w:val="0"/>'
    return (
        f'<w:p xmlns:w="{W}"><w:r><w:fldChar w:fldCharType="begin"><w:ffData><w:name w:val="Check1"/>'
        f"<w:enabled/><w:checkBox><w:sizeAuto/>{state}</w:checkBox></w:ffData></w:fldChar></w:r>"
        f'<w:r><w:instrText xml:space="preserve"> FORMCHECKBOX </w:instrText></w:r>'
        f'<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r>'
        f'<w:r><w:t xml:space="preserve"> {label}</w:t></w:r></w:p>'
    )


def test_content_control_and_legacy_checkboxes_become_task_items():
    document = docx.Document()
    document.add_paragraph("Checklist:")
    body = document.element.body
    for xml in (
        _content_control(True, "Widgets counted"),
        _content_control(False, "Report filed"),
        _legacy(True, "Keeper named"),
        _legacy(False, "Fee paid"),
    ):
        body.insert(len(body) - 1, parse_xml(xml))
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "Signed"
    cell = table.cell(0, 1)._tc
    cell.remove(cell.find(f"{{{W}}}p"))
    cell.append(parse_xml(_content_control(True, "yes")))
    out = io.BytesIO()
    document.save(out)
    md = convert_docx.convert(out.getvalue())
    lines = [line for line in md.splitlines() if line.strip()]
    assert lines[:5] == [
        "Checklist:",
        "- [x] Widgets counted",
        "- [ ] Report filed",
        "- [x] Keeper named",
        "- [ ] Fee paid",
    ]
    assert "| Signed | [x] yes |" in md
    assert "\u2612" not in md
    assert "\u2610" not in md
