"""core.links: the next page, the same-origin rule, and where plain http is allowed."""

import pytest

from core.links import next_link, request_target, same_origin, transport_allowed


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (
            '<https://3.basecampapi.com/1/x.json?page=2>; rel="next"',
            "https://3.basecampapi.com/1/x.json?page=2",
        ),
        ("<https://a.test/p?page=3>; rel=next", "https://a.test/p?page=3"),
        (
            '<https://a.test/p?page=1>; rel="prev", <https://a.test/p?page=3>; rel="next"',
            "https://a.test/p?page=3",
        ),
        ('<https://a.test/p?page=1>; rel="prev"', None),
        ("", None),
        ("   ", None),
        (None, None),
    ],
)
def test_next_link_reads_rel_next_only(header: str | None, expected: str | None) -> None:
    assert next_link(header) == expected


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("http://127.0.0.1:8000/1/a.json", "http://127.0.0.1:8000/1/b.json?page=2", True),
        ("https://3.basecampapi.com/1/a", "https://3.basecampapi.com:443/1/b", True),
        ("https://3.basecampapi.com/1/a", "HTTPS://3.BASECAMPAPI.COM/1/b", True),
        ("http://127.0.0.1:8000/a", "http://127.0.0.1:8001/a", False),
        ("http://127.0.0.1:8000/a", "https://127.0.0.1:8000/a", False),
        ("http://127.0.0.1:8000/a", "http://evil.example:8000/a", False),
        ("http://127.0.0.1:8000/a", "/relative/page", False),
        ("http://127.0.0.1:8000/a", "ftp://127.0.0.1:8000/a", False),
    ],
)
def test_same_origin_compares_scheme_host_and_port(first: str, second: str, same: bool) -> None:
    assert same_origin(first, second) is same


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://3.basecampapi.com", True),
        ("http://127.0.0.1:9", True),
        ("http://127.8.9.10:9", True),
        ("http://localhost:9", True),
        ("http://standin.localhost:9", False),  # a name DNS answers: loopback only by address
        ("http://127.999.0.1:9", False),  # no address at all: a name to resolve
        ("http://[::1]:9", True),
        ("http://3.basecampapi.com", False),
        ("http://10.0.0.1", False),
        ("file:///etc/passwd", False),
    ],
)
def test_plain_http_only_to_loopback(url: str, allowed: bool) -> None:
    assert transport_allowed(url) is allowed


ORIGIN = "http://127.0.0.1:8000"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.2:9\\@127.0.0.1:8000/1/events.json",  # urllib3 connects to 127.0.0.2
        "http://127.0.0.2:9@127.0.0.1:8000/1/events.json",  # userinfo
        "http://u:p@127.0.0.1:8000/1/events.json",
        "http://127.0.0.1:8000/1/ev ents.json",  # whitespace
        "http://127.0.0.1:8000/1/events.json\t",
        "http://127.0.0.1:8000/1/events.json?p=\x00",  # control characters
        "http://127.0.0.1:8000/1/events.json?p=\x7f",
        "http://127.0.0.1:8000/1/\u00e9vents.json",  # not ASCII: parsers normalise it differently
        "http://127.0.0.1:8000//127.0.0.2/x",  # a path a client may read as a host
        "http://127.0.0.1:8001/1/events.json",  # another origin
    ],
)
def test_an_ambiguous_url_has_no_origin_and_no_target(url: str) -> None:
    assert request_target(url, ORIGIN) is None
    assert not same_origin(url, ORIGIN) or url.startswith("http://127.0.0.1:8000//")


def test_only_the_path_and_query_of_a_url_on_the_origin_are_sent() -> None:
    assert request_target("http://127.0.0.1:8000/1/events.json?position=a%2Fb", ORIGIN) == (
        "/1/events.json?position=a%2Fb"
    )
    assert request_target("HTTP://127.0.0.1:8000/1/x.json#frag", ORIGIN) == "/1/x.json"
    assert request_target("http://127.0.0.1:8000", ORIGIN) == "/"
