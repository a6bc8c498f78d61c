"""HTML → Markdown: the page's main content (not navigation, headers, footers or sidebars) with its
headings, lists, tables, links and images.

The main content is the page's <main>, role=main or <article> when it has one (everything outside is
chrome). Inside it, <nav> (links between pages), forms and scripts are dropped, but asides, footers and
every ARIA role are kept: a landmark inside the content is content (a search result's snippet marked
role="contentinfo", a role="complementary" note). A page without a marked main content is its body,
less its chrome elements and roles (navigation, banner, contentinfo, complementary, search)."""

from __future__ import annotations

from bs4 import BeautifulSoup, Tag

from domain.documents import htmlmd

_CHROME = ["nav", "header", "footer", "aside", "form", "script", "style", "noscript", "iframe", "svg"]
_LANDMARKS = ("header", "footer", "aside")  # content when inside a marked main content
_CHROME_ROLES = ["navigation", "banner", "contentinfo", "complementary", "search"]


def _main(soup: BeautifulSoup) -> tuple[Tag, bool]:
    """The main content, and whether the page marked it (main, role=main, article) rather than it being
    the whole body."""
    for selector in ("main", "[role=main]", "article"):
        found = soup.select(selector)
        if found:
            return max(found, key=lambda t: len(t.get_text(" ", strip=True))), True
    return soup.body or soup, False


def convert(data: bytes) -> str:
    soup = htmlmd.parse(data)
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    main, marked = _main(soup)
    for tag in main.find_all(_CHROME):
        if tag.decomposed or tag is main or marked and tag.name in _LANDMARKS:
            continue
        if tag.name == "header" and tag.find(["h1", "h2", "h3"]):
            tag.unwrap()  # an article's own header holds its title
        else:
            tag.decompose()
    if not marked:
        # ARIA landmarks are page chrome only at the page's level: inside the main content a
        # role="contentinfo" (a search result's snippet) or "complementary" is content.
        for tag in main.find_all(role=_CHROME_ROLES):
            if not tag.decomposed:
                tag.decompose()
    for a in main.find_all("a", href=True):
        href = htmlmd.attr(a, "href")
        if href.lower().startswith("javascript:"):
            a.unwrap()
        elif href.startswith("#") and not a.get_text().replace("\u200b", "").strip():
            a.decompose()  # heading permalinks
    md = htmlmd.to_markdown(main)
    if title and not md.lstrip().startswith("#"):
        md = f"# {title}\n\n{md}"
    return md
