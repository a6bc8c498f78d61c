"""HTML → Markdown: the page's main content (not navigation, headers, footers or sidebars) with its
headings, lists, tables and links."""

from __future__ import annotations

from bs4 import BeautifulSoup, Tag

from domain.documents import htmlmd

_CHROME = ["nav", "header", "footer", "aside", "form", "script", "style", "noscript", "iframe", "svg"]
_CHROME_ROLES = ["navigation", "banner", "contentinfo", "complementary", "search"]


def _main(soup: BeautifulSoup) -> Tag:
    for selector in ("main", "[role=main]", "article"):
        found = soup.select(selector)
        if found:
            return max(found, key=lambda t: len(t.get_text(" ", strip=True)))
    return soup.body or soup


def convert(data: bytes) -> str:
    soup = BeautifulSoup(data, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    main = _main(soup)
    for tag in main.find_all(_CHROME):
        if tag.decomposed or tag is main:
            continue
        if tag.name == "header" and tag.find(["h1", "h2", "h3"]):
            tag.unwrap()  # an article's own header holds its title
        else:
            tag.decompose()
    for tag in main.find_all(role=_CHROME_ROLES):
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
