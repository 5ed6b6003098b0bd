"""A worker's Markdown rendered to Basecamp's rich-text subset (``core.worker_words``): plain values,
and hypothesis over any text for the allowlist."""

from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import given
from hypothesis import strategies as st

from core.text import message_text
from core.worker_words import ALLOWED_TAGS, render_markdown


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def tags_of(body: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Tags()
    parser.feed(body)
    parser.close()
    return parser.tags


MARKDOWNISH = st.one_of(
    st.text(max_size=80),
    st.lists(
        st.sampled_from([*"ab <>/&\"'*_~`#->[]()!:\n1.|=", "http://x.y", "javascript:", "<script>", "](", "\n\n"]),
        max_size=80,
    ).map("".join),
)


@given(MARKDOWNISH)
def test_every_tag_written_is_on_the_allowlist_and_only_a_link_has_an_attribute(text: str) -> None:
    for tag, attributes in tags_of(render_markdown(text)):
        assert tag in ALLOWED_TAGS
        if tag == "a":
            ((name, href),) = attributes
            assert name == "href"
            assert href is not None
            assert href.lower().startswith(("http://", "https://", "mailto:"))
        else:
            assert attributes == []


@given(MARKDOWNISH)
def test_the_same_markdown_renders_the_same_body(text: str) -> None:
    assert render_markdown(text) == render_markdown(text)


def test_markdown_becomes_basecamps_rich_text() -> None:
    body = render_markdown(
        "# Done\n\nFixed **the login** page, _see_ ~~old~~ [the PR](https://github.com/a/b/pull/1).\n"
        "Second line\n\n- one\n- two\n\n1. first\n\n> quoted\n\n```\ncode <here>\n```"
    )
    assert body == (
        "<h1>Done</h1><br>"
        '<div>Fixed <strong>the login</strong> page, <em>see</em> <strike>old</strike> '
        '<a href="https://github.com/a/b/pull/1">the PR</a>.<br>Second line</div><br>'
        "<ul><li>one</li><li>two</li></ul><br><ol><li>first</li></ol><br>"
        "<blockquote><div>quoted</div></blockquote><br><pre>code &lt;here&gt;</pre>"
    )


def test_html_the_worker_writes_is_text_not_markup() -> None:
    body = render_markdown('<script>alert(1)</script> <img src=x onerror=alert(1)> <a href="javascript:x">y</a>')
    assert tags_of(body) == [("div", [])]
    assert "&lt;script&gt;" in body


def test_a_link_to_anything_but_the_web_or_mail_is_text() -> None:
    assert tags_of(render_markdown("[a](javascript:alert(1)) [b](/relative) [c](mailto:x@y.z)")) == [
        ("div", []), ("a", [("href", "mailto:x@y.z")]),
    ]


def test_an_image_is_a_link_to_its_source_and_inline_code_is_its_text() -> None:
    assert render_markdown("![shot](https://x.y/s.png) `a<b`") == (
        '<div><a href="https://x.y/s.png">shot</a> a&lt;b</div>'
    )


def test_the_words_survive_rendering() -> None:
    """Reconciliation compares words (``core.text.message_text``): the rendered body keeps them."""
    assert message_text(render_markdown("**Done** with _it_:\n\n- a\n- b")) == "Done with it: a b"
