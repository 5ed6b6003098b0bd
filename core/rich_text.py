"""A worker's Markdown, rendered to Basecamp's rich-text subset: an allowlist, nothing else passes.

Rules:
1. Markdown is parsed by markdown-it-py (CommonMark, plus strikethrough) with raw HTML off: a
   tag the worker writes is escaped text, never markup.
2. The HTML is written here from the parser's tokens, never by its renderer: every tag emitted
   is in ``ALLOWED_TAGS`` (Basecamp 4's subset), looked up in ``BLOCK_TAGS`` and
   ``INLINE_TAGS``; a token with no entry keeps its text and loses its markup.
3. A paragraph is a ``<div>``; every heading ``<h1>``; a code block ``<pre>``; inline code and
   images keep their text (an image with an http(s) source becomes a link to it); a line break
   ``<br>``; a rule is dropped. Top-level blocks are separated by one ``<br>``.
4. A link keeps its ``href`` only for an ``http``, ``https`` or ``mailto`` URL, else it is text.
   ``href`` is the only attribute ever written, quoted and escaped.
5. Text is HTML-escaped once (quotes too, in attributes); the parser already decoded entities.
6. Pure: the same Markdown renders the same body, so a repeated call is the same message and
   reconciliation compares the same words (``core.text.message_text``)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import cache
from typing import Any

from markdown_it import MarkdownIt

ALLOWED_TAGS = frozenset({
    "div", "h1", "br", "strong", "em", "strike", "a", "pre", "ol", "ul", "li", "blockquote",
})  # fmt: skip
"""Rule 2: every tag the renderer can write."""

BLOCK_TAGS: dict[str, str] = {
    "paragraph": "div",
    "heading": "h1",
    "bullet_list": "ul",
    "ordered_list": "ol",
    "list_item": "li",
    "blockquote": "blockquote",
}
"""A block token's name (without ``_open``/``_close``) -> the tag it is written as."""

INLINE_TAGS: dict[str, str] = {"strong": "strong", "em": "em", "s": "strike"}
"""An inline token's name -> the tag it is written as."""

LINK_SCHEMES = ("http://", "https://", "mailto:")


@cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("strikethrough")


def render_markdown(text: str) -> str:
    """The body of a Basecamp comment saying ``text`` (Markdown), within ``ALLOWED_TAGS``."""
    tokens = _parser().parse(text)
    blocks: list[str] = []
    out: list[str] = []
    depth = 0
    for token in tokens:
        out.append(_block(token))
        depth += token.nesting
        if depth == 0 and token.nesting <= 0:
            blocks.append("".join(out))
            out = []
    blocks.append("".join(out))
    return "<br>".join(block for block in blocks if block)


def _block(token: Any) -> str:
    kind = str(token.type)
    if kind == "inline":
        return _inline(token.children or ())
    if kind in ("fence", "code_block"):
        return "<pre>" + _escape(str(token.content).rstrip("\n")) + "</pre>"
    if kind == "hr":
        return ""
    name, edge = _split(kind)
    tag = BLOCK_TAGS.get(name)
    if tag is None or token.hidden:
        return "" if edge else _escape(str(token.content))
    return f"<{tag}>" if edge == "open" else f"</{tag}>"


def _inline(children: Sequence[Any]) -> str:
    out: list[str] = []
    links: list[bool] = []  # for each open link: was its <a> written?
    for token in children:
        kind = str(token.type)
        name, edge = _split(kind)
        if kind in ("softbreak", "hardbreak"):
            out.append("<br>")
        elif name == "link":
            if edge == "open":
                href = _safe_href(token.attrGet("href"))
                links.append(href is not None)
                if href is not None:
                    out.append(f'<a href="{_escape(href, quote=True)}">')
            elif links.pop():
                out.append("</a>")
        elif kind == "image":
            src = _safe_href(token.attrGet("src"))
            alt = _escape(str(token.content)) or (_escape(src) if src else "")
            out.append(alt if src is None else f'<a href="{_escape(src, quote=True)}">{alt}</a>')
        elif name in INLINE_TAGS and edge:
            tag = INLINE_TAGS[name]
            out.append(f"<{tag}>" if edge == "open" else f"</{tag}>")
        elif not edge:
            out.append(_escape(str(token.content)))
    return "".join(out)


def _split(kind: str) -> tuple[str, str]:
    for edge in ("open", "close"):
        if kind.endswith("_" + edge):
            return kind[: -len(edge) - 1], edge
    return kind, ""


def _safe_href(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return value if value.lower().startswith(LINK_SCHEMES) else None


def _escape(text: str, *, quote: bool = False) -> str:
    return html.escape(text, quote=quote)
