"""Office Math (OMML, `m:oMath`) → LaTeX, for the Markdown of a DOCX.

A small walker over the math elements Word writes (ECMA-376 part 1, §22.1): fractions, scripts,
radicals, n-ary operators, delimiters, functions, limits, accents, bars, group characters, boxes,
matrices and equation arrays. Text runs keep their characters, except that Greek letters and common
symbols become LaTeX commands and LaTeX's special characters are escaped. Anything unknown contributes
its text, so nothing in an equation is dropped."""

from __future__ import annotations

import re
from collections.abc import Iterable

from lxml import etree

FUNCTIONS = frozenset(
    "sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh coth log ln lg exp lim liminf limsup "
    "max min sup inf det gcd deg dim ker arg hom Pr".split()
)
_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon",
    "ζ": "zeta", "η": "eta", "θ": "theta", "ϑ": "vartheta", "ι": "iota", "κ": "kappa", "λ": "lambda",
    "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ϖ": "varpi", "ρ": "rho", "ϱ": "varrho",
    "σ": "sigma", "ς": "varsigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "ϕ": "phi", "χ": "chi",
    "ψ": "psi", "ω": "omega", "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi",
    "Π": "Pi", "Σ": "Sigma", "Υ": "Upsilon", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
}  # fmt: skip
# Relations and binary operators get spaces around them; other symbols are written as they come.
_SPACED = {
    "=": "=", "+": "+", "<": "<", ">": ">", "×": "\\times", "÷": "\\div", "⋅": "\\cdot", "·": "\\cdot",
    "±": "\\pm", "∓": "\\mp", "≤": "\\le", "≥": "\\ge", "≠": "\\neq", "≈": "\\approx", "≡": "\\equiv",
    "∼": "\\sim", "≃": "\\simeq", "≅": "\\cong", "∝": "\\propto", "→": "\\to", "←": "\\leftarrow",
    "⇒": "\\Rightarrow", "⇐": "\\Leftarrow", "⇔": "\\Leftrightarrow", "↔": "\\leftrightarrow",
    "∈": "\\in", "∉": "\\notin", "⊂": "\\subset", "⊆": "\\subseteq", "⊃": "\\supset", "⊇": "\\supseteq",
    "∪": "\\cup", "∩": "\\cap", "∧": "\\wedge", "∨": "\\vee", "≪": "\\ll", "≫": "\\gg", "∣": "\\mid",
}  # fmt: skip
_SYMBOLS = {
    "∞": "\\infty", "∂": "\\partial", "∇": "\\nabla", "∀": "\\forall", "∃": "\\exists",
    "∅": "\\emptyset", "∘": "\\circ", "°": "^{\\circ}", "′": "'", "″": "''", "−": "-", "∗": "*",
    "ℏ": "\\hbar", "ℓ": "\\ell", "…": "\\ldots", "⋯": "\\cdots", "¬": "\\neg", "⊥": "\\perp",
    "∥": "\\parallel", "∠": "\\angle", "ℝ": "\\mathbb{R}", "ℕ": "\\mathbb{N}", "ℤ": "\\mathbb{Z}",
    "ℚ": "\\mathbb{Q}", "ℂ": "\\mathbb{C}", "√": "\\surd", "∑": "\\sum", "∏": "\\prod", "∫": "\\int",
    "{": "\\{", "}": "\\}", "#": "\\#", "%": "\\%", "&": "\\&", "_": "\\_", "$": "\\$",
    "\\": "\\backslash", "^": "\\hat{}", "~": "\\sim",
}  # fmt: skip
_INVISIBLE = dict.fromkeys(map(ord, "\u2061\u2062\u2063\u2064\u200b"), None)
_NARY = {
    "∑": "\\sum", "∏": "\\prod", "∐": "\\coprod", "∫": "\\int", "∬": "\\iint", "∭": "\\iiint",
    "∮": "\\oint", "∯": "\\oiint", "⋃": "\\bigcup", "⋂": "\\bigcap", "⋁": "\\bigvee", "⋀": "\\bigwedge",
    "⨁": "\\bigoplus", "⨂": "\\bigotimes",
}  # fmt: skip
_ACCENTS = {
    "\u0302": "\\hat", "\u0301": "\\acute", "\u0300": "\\grave", "\u0303": "\\tilde", "\u0304": "\\bar",
    "\u0305": "\\overline", "\u0306": "\\breve", "\u0307": "\\dot", "\u0308": "\\ddot", "\u030c": "\\check",
    "\u20d7": "\\vec", "\u20d1": "\\vec", "\u20e1": "\\overleftrightarrow",
}  # fmt: skip
_DELIMS = {
    "(": "(", ")": ")", "[": "[", "]": "]", "{": "\\{", "}": "\\}", "|": "|", "‖": "\\|",
    "⟨": "\\langle", "⟩": "\\rangle", "〈": "\\langle", "〉": "\\rangle", "⌊": "\\lfloor",
    "⌋": "\\rfloor", "⌈": "\\lceil", "⌉": "\\rceil", "": ".",
}  # fmt: skip
_WORD = re.compile(r"[A-Za-z]+")
_COMMAND_END = re.compile(r"\\[A-Za-z]+$")
_ATOM = re.compile(r"^(?:.|[0-9.]+|\\[A-Za-z]+|\{.*\}|\\mathrm\{[^{}]*\}|\\left.*\\right.?\S*)$", re.S)


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _children(el: etree._Element, name: str) -> list[etree._Element]:
    return [c for c in el if _local(c.tag) == name]


def _child(el: etree._Element, name: str) -> etree._Element | None:
    return next((c for c in el if _local(c.tag) == name), None)


def _prop(el: etree._Element, pr: str, name: str) -> str | None:
    """The `m:val` of `<m:{pr}><m:{name} m:val=…/>` under `el` (None when absent; "" for a bare flag)."""
    props = _child(el, pr)
    found = _child(props, name) if props is not None else None
    if found is None:
        return None
    return next((v for k, v in found.attrib.items() if _local(k) == "val"), "")


def join(parts: Iterable[str]) -> str:
    """Concatenate LaTeX pieces, keeping a command from running into a following letter."""
    out = ""
    for part in parts:
        if not part:
            continue
        if out and _COMMAND_END.search(out) and part[0].isalpha():
            out += " "
        out += part
    return out


def _group(latex: str) -> str:
    """A script's base as one atom: `10`, `x`, `\\alpha` stay bare, `ab` becomes `{ab}`."""
    latex = latex.strip()
    return latex if _ATOM.match(latex) else "{" + latex + "}"


def _text(text: str, *, plain: bool, normal: bool) -> str:
    """A math run's text as LaTeX. `plain` is upright style (m:sty p), `normal` is ordinary text (m:nor)."""
    # A function application mark ends the function's name ("sin⁡x"); the other invisible marks go.
    text = text.replace("\u2061", " ").translate(_INVISIBLE)
    if normal and text.strip():
        return "\\text{" + "".join(_SYMBOLS.get(c, c) if c in "{}#%&_$\\^~" else c for c in text) + "}"
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        word = _WORD.match(text, i)
        if word:
            w = word.group()
            if w in FUNCTIONS:
                out.append(f"\\{w} ")
            elif plain and len(w) > 1:
                out.append(f"\\mathrm{{{w}}}")
            else:
                out.append(w)
            i = word.end()
            continue
        if c in _GREEK:
            out.append("\\" + _GREEK[c])
        elif c in _SPACED:
            out.append(f" {_SPACED[c]} ")
        elif c in _SYMBOLS:
            out.append(_SYMBOLS[c])
        elif c.isspace():
            out.append(" ")
        else:
            out.append(c)
        i += 1
    return join(out)


def _run(r: etree._Element) -> str:
    rpr = _child(r, "rPr")
    normal = rpr is not None and _child(rpr, "nor") is not None
    plain = _prop(r, "rPr", "sty") == "p"
    text = "".join(t.text or "" for t in r.iter() if _local(t.tag) == "t")
    return _text(text, plain=plain, normal=normal)


def _arg(el: etree._Element | None) -> str:
    return "" if el is None else _tidy(_walk(el))


def _walk(el: etree._Element) -> str:
    return join(_node(c) for c in el)


def _node(el: etree._Element) -> str:  # noqa: C901, PLR0911, PLR0912 (one branch per OMML element)
    name = _local(el.tag)
    if not name or name.endswith("Pr"):  # properties, comments
        return ""
    if name == "r":
        return _run(el)
    if name == "f":
        num, den = _arg(_child(el, "num")), _arg(_child(el, "den"))
        kind = _prop(el, "fPr", "type")
        if kind == "lin":
            return f"{_group(num)}/{_group(den)}"
        if kind == "noBar":
            return f"\\binom{{{num}}}{{{den}}}"
        return f"\\frac{{{num}}}{{{den}}}"
    if name in ("sSup", "sSub", "sSubSup"):
        base = _group(_arg(_child(el, "e")))
        lower, upper = _child(el, "sub"), _child(el, "sup")
        return (
            base
            + (f"_{{{_arg(lower)}}}" if lower is not None else "")
            + (f"^{{{_arg(upper)}}}" if upper is not None else "")
        )
    if name == "sPre":
        sub, sup = _arg(_child(el, "sub")), _arg(_child(el, "sup"))
        return f"{{}}_{{{sub}}}^{{{sup}}}{_group(_arg(_child(el, 'e')))}"
    if name == "rad":
        deg = _arg(_child(el, "deg"))
        hidden = _prop(el, "radPr", "degHide") in ("", "1", "on", "true")
        body = _arg(_child(el, "e"))
        return f"\\sqrt[{deg}]{{{body}}}" if deg and not hidden else f"\\sqrt{{{body}}}"
    if name == "nary":
        char = _prop(el, "naryPr", "chr") or "∫"  # the default n-ary operator is the integral
        op = _NARY.get(char, _text(char, plain=False, normal=False))
        sub = "" if _prop(el, "naryPr", "subHide") in ("", "1", "on", "true") else _arg(_child(el, "sub"))
        sup = "" if _prop(el, "naryPr", "supHide") in ("", "1", "on", "true") else _arg(_child(el, "sup"))
        limits = (f"_{{{sub}}}" if sub else "") + (f"^{{{sup}}}" if sup else "")
        return f"{op}{limits} {_arg(_child(el, 'e'))}"
    if name == "d":
        beg = _prop(el, "dPr", "begChr")
        end = _prop(el, "dPr", "endChr")
        sep = _prop(el, "dPr", "sepChr")
        beg = "(" if beg is None else beg
        end = ")" if end is None else end
        sep = "|" if sep is None else sep
        inner = f" {_DELIMS.get(sep, sep)} ".join(_arg(e) for e in _children(el, "e"))
        return f"\\left{_DELIMS.get(beg, beg)}{inner}\\right{_DELIMS.get(end, end)}"
    if name == "func":
        fname = re.sub(r"^\\mathrm\{([A-Za-z]+)\}$", r"\1", _arg(_child(el, "fName")))
        if _WORD.fullmatch(fname):  # a name that is not one of LaTeX's own functions
            fname = f"\\operatorname{{{fname}}}"
        return join([fname, " ", _arg(_child(el, "e"))])
    if name in ("limLow", "limUpp"):
        mark = "_" if name == "limLow" else "^"
        return f"{_group(_arg(_child(el, 'e')))}{mark}{{{_arg(_child(el, 'lim'))}}}"
    if name == "acc":
        accent = _prop(el, "accPr", "chr")
        command = _ACCENTS.get("\u0302" if accent is None else accent, "\\hat")
        return f"{command}{{{_arg(_child(el, 'e'))}}}"
    if name == "bar":
        top = _prop(el, "barPr", "pos") == "top"
        return f"\\{'overline' if top else 'underline'}{{{_arg(_child(el, 'e'))}}}"
    if name == "groupChr":
        char = _prop(el, "groupChrPr", "chr") or "⏟"
        top = _prop(el, "groupChrPr", "pos") == "top"
        body = _arg(_child(el, "e"))
        if char == "⏟":
            return f"\\underbrace{{{body}}}"
        if char == "⏞":
            return f"\\overbrace{{{body}}}"
        mark = _text(char, plain=False, normal=False).strip()
        return f"\\{'overset' if top else 'underset'}{{{mark}}}{{{body}}}"
    if name == "borderBox":
        return f"\\boxed{{{_arg(_child(el, 'e'))}}}"
    if name == "m":
        rows = [" & ".join(_arg(e) for e in _children(mr, "e")) for mr in _children(el, "mr")]
        return "\\begin{matrix}" + " \\\\ ".join(rows) + "\\end{matrix}"
    if name == "eqArr":
        return "\\begin{aligned}" + " \\\\ ".join(_arg(e) for e in _children(el, "e")) + "\\end{aligned}"
    if name == "phant":
        show = _prop(el, "phantPr", "show")
        return "" if show in ("0", "off", "false") else _walk(el)
    if name == "t":
        return _text(el.text or "", plain=False, normal=False)
    # box, e, num, den, sub, sup, oMath, w:r inside math… and anything new: their content.
    return _walk(el)


def _tidy(latex: str) -> str:
    latex = re.sub(r"\s+", " ", latex).strip()
    latex = re.sub(r"\{ ", "{", latex)
    latex = re.sub(r" \}", "}", latex)
    return re.sub(r" ([_^])", r"\1", latex)


def to_latex(math: etree._Element) -> str:
    """An `m:oMath` or `m:oMathPara` as LaTeX (without delimiters); a paragraph's equations one per line."""
    if _local(math.tag) == "oMathPara":
        return " \\\\ ".join(to_latex(m) for m in _children(math, "oMath"))
    return _tidy(_walk(math))
