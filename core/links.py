"""The URLs Basecamp hands back: a listing's next page, the same-origin rule, what is sent.

The next page is the ``rel="next"`` URL of a ``Link`` header, followed only to the request's origin
(scheme, host, port with the default made explicit; scheme and host compared case-insensitively):
any other is a failed listing, never a shorter one. Plain ``http`` is allowed only to a loopback
host, by address or ``localhost`` itself (a name under ``.localhost`` resolves through DNS). A URL
from Basecamp is followed only when unambiguous: printable ASCII with no backslash, whitespace,
control character or userinfo, on each of which parsers disagree (``http://OTHER\\@ORIGIN/`` is
``ORIGIN`` to ``urlsplit``, ``OTHER`` to urllib3). Only ``request_target`` is sent, over a
connection bound to the configured origin, so no parsing disagreement can move the request.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, urlsplit

_ENTRY = re.compile(r"<([^>]*)>\s*((?:;\s*[^;,]*)*)")
_REL = re.compile(r"""rel\s*=\s*"?([^";,]*)"?""", re.IGNORECASE)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNAMBIGUOUS = re.compile(r"[!-\[\]-~]+")  # printable ASCII but the backslash


def next_link(header: str | None) -> str | None:
    if not header or not header.strip():
        return None
    for match in _ENTRY.finditer(header):
        url, params = match.group(1).strip(), match.group(2)
        for rel in _REL.finditer(params):
            if "next" in rel.group(1).lower().split():
                return url or None
    return None


def origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an absolute, unambiguous URL, or None if it has none."""
    parts = _unambiguous(url)
    if parts is None:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    try:
        port = parts.port or _DEFAULT_PORTS[scheme]
    except ValueError:
        return None
    return scheme, host, port


def same_origin(first: str, second: str) -> bool:
    left, right = origin(first), origin(second)
    return left is not None and left == right


def _unambiguous(url: str) -> SplitResult | None:
    if not _UNAMBIGUOUS.fullmatch(url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return None if "@" in parts.netloc else parts


def request_target(url: str, configured: str) -> str | None:
    """The path and query to send for ``url``; None when it is ambiguous or on another origin."""
    if not same_origin(url, configured):
        return None
    parts = urlsplit(url)
    path = parts.path or "/"
    if not path.startswith("/") or path.startswith("//"):
        return None
    return f"{path}?{parts.query}" if parts.query else path


def ticket_url_allowed(url: str, configured: str) -> bool:
    """A stream ticket's URL: ``wss`` to the configured host (``ws`` only for plain http to loopback)."""
    parts, home = _unambiguous(url), origin(configured)
    if parts is None or home is None or not parts.hostname:
        return False
    try:
        parts.port  # noqa: B018 -- a port that is not a number raises here
    except ValueError:
        return False
    allowed = {"wss"} if home[0] == "https" else {"wss", "ws"}
    return parts.scheme.lower() in allowed and parts.hostname.lower() == home[1]


def is_loopback_host(host: str) -> bool:
    name = host.lower().strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def transport_allowed(url: str) -> bool:
    found = origin(url)
    if found is None:
        return False
    scheme, host, _ = found
    return scheme == "https" or is_loopback_host(host)
