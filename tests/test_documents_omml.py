"""Office Math in a DOCX becomes LaTeX in its Markdown: each OMML construct Word writes, built into a
real DOCX here (python-docx with m:oMath inserted), then converted as an upload is."""

from __future__ import annotations

import io
import re
from functools import lru_cache
from typing import Any, cast

import docx
import pytest
from lxml import etree

from domain.documents import convert_docx
from tests.documents_support import fixture_path

M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def r(text: str, *, plain: bool = False) -> str:
    props = '<m:rPr><m:sty m:val="p"/></m:rPr>' if plain else ""
    return f"<m:r>{props}<m:t>{text}</m:t></m:r>"


def _math_docx(*equations: str, display: bool = False) -> bytes:
    """A DOCX with one paragraph per equation ("Eq n: " then the equation, or the equation alone as a
    display equation)."""
    word = docx.Document()
    for n, xml in enumerate(equations):
        math = f'<m:oMath xmlns:m="{M}" xmlns:w="{W}">{xml}</m:oMath>'
        if display:
            math = f'<m:oMathPara xmlns:m="{M}" xmlns:w="{W}">{math}</m:oMathPara>'
        para = word.add_paragraph("" if display else f"Eq {n}: ")
        cast(Any, para._p).append(etree.fromstring(math))
    out = io.BytesIO()
    word.save(out)
    return out.getvalue()


@lru_cache(maxsize=1)
def _converted() -> dict[str, str]:
    """Every case's LaTeX by its name: one document holds them all (one conversion)."""
    md = convert_docx.convert(_math_docx(*(xml for _, xml, _ in CASES)))
    found = dict(re.findall(r"^Eq (\d+): \$(.*)\$$", md, re.M))
    return {name: found.get(str(n), f"<missing from {md!r}>") for n, (name, _, _) in enumerate(CASES)}


CASES = [
    ("fraction", f"<m:f><m:num>{r('a')}</m:num><m:den>{r('b')}</m:den></m:f>", "\\frac{a}{b}"),
    (
        "linear fraction",
        f'<m:f><m:fPr><m:type m:val="lin"/></m:fPr><m:num>{r("a")}</m:num><m:den>{r("b")}</m:den></m:f>',
        "a/b",
    ),
    ("superscript", f"<m:sSup><m:e>{r('x')}</m:e><m:sup>{r('2')}</m:sup></m:sSup>", "x^{2}"),
    ("subscript", f"<m:sSub><m:e>{r('x')}</m:e><m:sub>{r('i')}</m:sub></m:sSub>", "x_{i}"),
    (
        "sub and superscript",
        f"<m:sSubSup><m:e>{r('x')}</m:e><m:sub>{r('i')}</m:sub><m:sup>{r('2')}</m:sup></m:sSubSup>",
        "x_{i}^{2}",
    ),
    (
        "a multi-letter base is grouped",
        f"<m:sSup><m:e>{r('ab')}</m:e><m:sup>{r('n')}</m:sup></m:sSup>",
        "{ab}^{n}",
    ),
    (
        "square root",
        f'<m:rad><m:radPr><m:degHide m:val="1"/></m:radPr><m:deg/><m:e>{r("x")}</m:e></m:rad>',
        "\\sqrt{x}",
    ),
    ("cube root", f"<m:rad><m:deg>{r('3')}</m:deg><m:e>{r('x')}</m:e></m:rad>", "\\sqrt[3]{x}"),
    (
        "sum with limits",
        f'<m:nary><m:naryPr><m:chr m:val="∑"/></m:naryPr><m:sub>{r("i=1")}</m:sub>'
        f"<m:sup>{r('n')}</m:sup><m:e>{r('i')}</m:e></m:nary>",
        "\\sum_{i = 1}^{n} i",
    ),
    (
        "integral (the default n-ary operator)",
        f"<m:nary><m:sub>{r('0')}</m:sub><m:sup>{r('1')}</m:sup><m:e>{r('f(x)dx')}</m:e></m:nary>",
        "\\int_{0}^{1} f(x)dx",
    ),
    (
        "integral without limits",
        f'<m:nary><m:naryPr><m:subHide m:val="1"/><m:supHide m:val="1"/></m:naryPr><m:sub/><m:sup/>'
        f"<m:e>{r('x')}</m:e></m:nary>",
        "\\int x",
    ),
    ("parentheses", f"<m:d><m:e>{r('x+1')}</m:e></m:d>", "\\left(x + 1\\right)"),
    (
        "brackets and a separator",
        f'<m:d><m:dPr><m:begChr m:val="["/><m:endChr m:val="]"/></m:dPr>'
        f"<m:e>{r('a')}</m:e><m:e>{r('b')}</m:e></m:d>",
        "\\left[a | b\\right]",
    ),
    (
        "braces",
        f'<m:d><m:dPr><m:begChr m:val="{{"/><m:endChr m:val="}}"/></m:dPr><m:e>{r("x")}</m:e></m:d>',
        "\\left\\{x\\right\\}",
    ),
    (
        "function",
        f"<m:func><m:fName>{r('cos', plain=True)}</m:fName><m:e>{r('θ')}</m:e></m:func>",
        "\\cos \\theta",
    ),
    (
        "function LaTeX does not know",
        f"<m:func><m:fName>{r('sgn', plain=True)}</m:fName><m:e>{r('x')}</m:e></m:func>",
        "\\operatorname{sgn} x",
    ),
    (
        "limit",
        f"<m:func><m:fName><m:limLow><m:e>{r('lim', plain=True)}</m:e><m:lim>{r('n→∞')}</m:lim>"
        f"</m:limLow></m:fName><m:e>{r('a')}</m:e></m:func>",
        "\\lim_{n \\to \\infty} a",
    ),
    (
        "matrix",
        f"<m:d><m:e><m:m><m:mr><m:e>{r('a')}</m:e><m:e>{r('b')}</m:e></m:mr>"
        f"<m:mr><m:e>{r('c')}</m:e><m:e>{r('d')}</m:e></m:mr></m:m></m:e></m:d>",
        "\\left(\\begin{matrix}a & b \\\\ c & d\\end{matrix}\\right)",
    ),
    ("hat accent (the default)", f"<m:acc><m:e>{r('x')}</m:e></m:acc>", "\\hat{x}"),
    (
        "dot accent",
        f'<m:acc><m:accPr><m:chr m:val="\u0307"/></m:accPr><m:e>{r("x")}</m:e></m:acc>',
        "\\dot{x}",
    ),
    (
        "vector arrow",
        f'<m:acc><m:accPr><m:chr m:val="\u20d7"/></m:accPr><m:e>{r("v")}</m:e></m:acc>',
        "\\vec{v}",
    ),
    (
        "overbar",
        f'<m:bar><m:barPr><m:pos m:val="top"/></m:barPr><m:e>{r("x")}</m:e></m:bar>',
        "\\overline{x}",
    ),
    ("underbar (the default)", f"<m:bar><m:e>{r('x')}</m:e></m:bar>", "\\underline{x}"),
    ("underbrace", f"<m:groupChr><m:e>{r('a+b')}</m:e></m:groupChr>", "\\underbrace{a + b}"),
    ("box", f"<m:borderBox><m:e>{r('E=mc')}</m:e></m:borderBox>", "\\boxed{E = mc}"),
    ("greek and symbols", r("α×β≤∞"), "\\alpha \\times \\beta \\le \\infty"),
    ("a command then a letter", r("λa"), "\\lambda a"),
    ("LaTeX special characters", r("50%#"), "50\\%\\#"),
    ("upright units", r("10 mm", plain=True), "10 \\mathrm{mm}"),
    (
        "ordinary text",
        f"<m:r><m:rPr><m:nor/></m:rPr><m:t>if x</m:t></m:r>{r('&gt;0')}",
        "\\text{if x} > 0",
    ),
    ("invisible function application", r("sin\u2061x", plain=True), "\\sin x"),
]


@pytest.mark.parametrize(
    ("name", "latex"), [(name, latex) for name, _, latex in CASES], ids=[c[0] for c in CASES]
)
def test_each_omml_construct_becomes_latex(name, latex):
    assert _converted()[name] == latex


def test_display_equations_are_double_dollar_lines_and_scripts_stay_unescaped():
    eq = f"<m:sSub><m:e>{r('x')}</m:e><m:sub>{r('i')}</m:sub></m:sSub>{r('*')}{r('y_')}"
    md = convert_docx.convert(_math_docx(eq, display=True))
    assert md == "$$x_{i}*y\\_$$\n"
    word = docx.Document()
    word.add_paragraph("Before")
    para = word.add_paragraph("Text ")
    cast(Any, para._p).append(
        etree.fromstring(
            f'<m:oMathPara xmlns:m="{M}" xmlns:w="{W}"><m:oMath>{r("a=b")}</m:oMath></m:oMathPara>'
        )
    )
    out = io.BytesIO()
    word.save(out)
    assert convert_docx.convert(out.getvalue()) == "Before\n\nText\n\n$$a = b$$\n"


def test_the_equations_fixture_keeps_fractions_scripts_and_symbols():
    md = convert_docx.convert(fixture_path("markitdown-equations.docx"))
    assert "For $m = 1$" in md
    assert (
        "$$\\sin \\theta = \\frac{m\\lambda}{a} = \\frac{(1)\\left(550 \\times 10^{-6} \\mathrm{mm}\\right)}"
        "{2.5 \\mathrm{mm}} = 2.2 \\times 10^{-4}$$"
    ) in md.splitlines()
    assert "$\\theta = \\sin^{-1} \\left(2.2 \\times 10^{-4}\\right)" in md
    assert "\\frac{1}{\\sin 45.0^{\\circ}}" in md


def test_a_display_equation_in_a_list_item_stays_on_the_item_line():
    word = docx.Document()
    para = word.add_paragraph("Item ", style="List Bullet")
    cast(Any, para._p).append(
        etree.fromstring(
            f'<m:oMathPara xmlns:m="{M}" xmlns:w="{W}"><m:oMath>{r("a=b")}</m:oMath></m:oMathPara>'
        )
    )
    word.add_paragraph("Other", style="List Bullet")
    out = io.BytesIO()
    word.save(out)
    assert convert_docx.convert(out.getvalue()) == "- Item $$a = b$$\n- Other\n"
