"""The pages' HTML builder (web/kernel/html.py): a value is escaped unless it is Markup, and two pieces of
Markup added together stay Markup, so a page built by adding blocks is not escaped by the next `h`; Markup
and a plain string give a plain string, which `h` escapes."""

from __future__ import annotations

from web.kernel.html import Markup, h, join


def test_markup_added_to_markup_stays_html_and_plain_text_is_escaped() -> None:
    table, form = Markup("<table></table>"), Markup('<form method="post"></form>')
    assert h("<section>{v}</section>", v=table + form) == (
        '<section><table></table><form method="post"></form></section>'
    )
    assert h("{v}", v=join([table, form])) == h("{v}", v=table + form)
    mixed = table + "<script>"
    assert type(mixed) is str
    assert h("{v}", v=mixed) == "&lt;table&gt;&lt;/table&gt;&lt;script&gt;"
    assert h("{v}", v="<b>" + table) == "&lt;b&gt;&lt;table&gt;&lt;/table&gt;"
