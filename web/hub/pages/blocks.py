"""Blocks the review desk's pages share: a table that stacks on a phone with each cell labelled, a list of
facts, a clipped line of text, the parts of a form (its token, a text area, a choice from a list, radio
buttons), and the flash and error messages."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from web.hub.pages.session import Flash
from web.kernel.html import Markup, esc, h, join

_CELL = re.compile(r"<t[dh](?=[\s>])")


def labelled(row: Markup, headers: Sequence[str]) -> Markup:
    """The row with each cell labelled by its column's header (`data-label`), which a phone's layout shows
    beside the value once the table is stacked (cell values are escaped, so every `<td`/`<th` is a cell)."""
    names = iter(headers)

    def label(found: re.Match[str]) -> str:
        name = next(names, "")
        return f'{found.group(0)} data-label="{esc(name)}"' if name else found.group(0)

    return Markup(_CELL.sub(label, row))


def table(caption: str, headers: Sequence[str], rows: list[Markup]) -> Markup:
    """A table in a scroll container of its own; on a phone its rows are stacked, each cell labelled, so
    the page never scrolls sideways."""
    if not rows:
        return Markup("")
    return h(
        '<div class="scroll" role="region" tabindex="0" aria-label="{caption}">'
        '<table class="stack"><caption>{caption}</caption><thead><tr>{headers}</tr></thead>'
        "<tbody>{rows}</tbody></table></div>",
        caption=caption,
        headers=join(h('<th scope="col">{c}</th>', c=c) for c in headers),
        rows=join(labelled(row, headers) for row in rows),
    )


def clip(text: str | None, size: int = 140) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= size else text[: size - 1] + "…"


def facts(pairs: Iterable[tuple[str, Any]]) -> Markup:
    return h(
        '<dl class="facts">{items}</dl>',
        items=join(h("<dt>{k}</dt><dd>{v}</dd>", k=k, v=v) for k, v in pairs if v not in (None, "")),
    )


def csrf_field(token: str) -> Markup:
    return h('<input type="hidden" name="csrf" value="{token}">', token=token)


def textarea(name: str, label: str, value: str, *, required: bool, maxlength: int, hint: str) -> Markup:
    return h(
        """<div class="field"><label for="{name}">{label}</label>
<p class="hint" id="{name}-hint">{hint}</p>
<textarea id="{name}" name="{name}" maxlength="{maxlength}" aria-describedby="{name}-hint"{required}>
{value}</textarea>
</div>""",
        name=name,
        label=label,
        hint=hint,
        maxlength=maxlength,
        required=Markup(" required") if required else Markup(""),
        value=value,
    )


def select(
    field_id: str,
    name: str,
    label: str,
    options: Iterable[tuple[str, str]],
    chosen: str,
    *,
    required: bool = False,
    placeholder: str | None = None,
) -> Markup:
    """A labelled choice from a list of (value, text); `placeholder`: a first, empty option asking for one."""
    first = h('<option value="">{text}</option>', text=placeholder) if placeholder else Markup("")
    return h(
        '<div class="field"><label for="{id}">{label}</label><select id="{id}" name="{name}"{required}>'
        "{first}{options}</select></div>",
        id=field_id,
        name=name,
        label=label,
        required=Markup(" required") if required else Markup(""),
        first=first,
        options=join(
            h(
                '<option value="{v}"{selected}>{text}</option>',
                v=value,
                text=text,
                selected=Markup(" selected") if value == chosen else Markup(""),
            )
            for value, text in options
        ),
    )


def radios(name: str, legend: str, options: list[tuple[str, str]], chosen: str, *, required: bool) -> Markup:
    return h(
        "<fieldset><legend>{legend}</legend>{options}</fieldset>",
        legend=legend,
        options=join(
            h(
                '<input type="radio" id="{name}-{value}" name="{name}" value="{value}"{checked}{required}>'
                '<label for="{name}-{value}">{label}</label>',
                name=name,
                value=value,
                label=label,
                checked=Markup(" checked") if value == chosen else Markup(""),
                required=Markup(" required") if required else Markup(""),
            )
            for value, label in options
        ),
    )


def flash_text(flash: Flash | str) -> Markup:
    if isinstance(flash, str):
        return esc(flash)
    if flash.link and flash.label:
        return h(
            '{t}<a href="{href}">{label}</a>{a}',
            t=flash.text,
            href=flash.link,
            label=flash.label,
            a=flash.after,
        )
    return esc(flash.plain)


def messages(flash: Flash | str | None = None, error: str | None = None) -> Markup:
    parts = []
    if flash:
        parts.append(h('<div class="flash" role="status"><p>{m}</p></div>', m=flash_text(flash)))
    if error:
        parts.append(h('<div class="error" role="alert"><p>{m}</p></div>', m=error))
    return join(parts)
