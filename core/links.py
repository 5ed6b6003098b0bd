"""Following a listing's pages: the ``Link`` header, and the same-origin rule.

Rules:
1. The next page is the URL of the ``rel="next"`` entry of an RFC 5988 ``Link`` header; no
   header, a blank one, or one without ``next`` means this was the last page.
2. A next page is followed only to the same origin as the request: scheme, host and port
   (the default port made explicit), compared case-insensitively for scheme and host. Any
   other origin is a failed listing, never a shorter one.
3. Plain ``http`` is allowed only to a loopback host: localhost, 127.0.0.0/8, ::1, or a
   name under ``.localhost``.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_ENTRY = re.compile(r"<([^>]*)>\s*((?:;\s*[^;,]*)*)")
_REL = re.compile(r"""rel\s*=\s*"?([^";,]*)"?""", re.IGNORECASE)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def next_link(header: str | None) -> str | None:
    """The URL the ``Link`` header names as ``rel="next"``, if any."""
    if not header or not header.strip():
        return None
    for match in _ENTRY.finditer(header):
        url, params = match.group(1).strip(), match.group(2)
        for rel in _REL.finditer(params):
            if "next" in rel.group(1).lower().split():
                return url or None
    return None


def origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an absolute URL, or None if it has none."""
    parts = urlsplit(url)
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
    """Whether two absolute URLs share scheme, host and port."""
    left, right = origin(first), origin(second)
    return left is not None and left == right


def is_loopback_host(host: str) -> bool:
    """Hosts for which plain http is allowed."""
    name = host.lower().strip("[]")
    return (
        name in {"localhost", "::1"}
        or name.endswith(".localhost")
        or re.fullmatch(r"127\.\d{1,3}\.\d{1,3}\.\d{1,3}", name) is not None
    )


def transport_allowed(url: str) -> bool:
    """https anywhere; http only to a loopback host."""
    found = origin(url)
    if found is None:
        return False
    scheme, host, _ = found
    return scheme == "https" or is_loopback_host(host)
