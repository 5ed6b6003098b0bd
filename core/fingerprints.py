"""Whether a text holds a credential of the connector, told from fingerprints alone.

A credential's encoded forms are the credential as it is; its base64, in the standard and the
URL-safe alphabet at each of the three alignments it can take inside a longer base64 (the edge
characters its neighbours decide dropped); its URL-encoding, with and without ``/`` kept, and with
every byte as ``%XX``; and its hex. The hex and URL-encoded forms are compared with ASCII case
folded. A fingerprint is the SHA-256 of one form, with its length and the credential's name: the
only thing kept of a credential where a worker might read it. ``credential_in`` drops whitespace
from each text (a wrapped base64 is found), then slides a window of each fingerprint's length over
its UTF-8 bytes. A credential shorter than ``MIN_LENGTH`` has none: it would be found in words."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

MIN_LENGTH = 12
ACCESS_TOKEN = "the agent's access token"  # noqa: S105 -- the names a refusal gives, not secrets
REFRESH_TOKEN = "the agent's refresh token"  # noqa: S105
CLIENT_SECRET = "the client secret"  # noqa: S105
TASK_TOKEN = "a task token"  # noqa: S105


@dataclass(frozen=True, slots=True)
class Fingerprint:
    credential: str  # what it is, e.g. "the agent's access token": named, never shown
    length: int
    folded: bool
    sha256: str  # lowercase hex


def encoded_forms(secret: str) -> frozenset[tuple[str, bool]]:
    """Each form of ``secret`` and whether it is compared case-folded."""
    data = secret.encode("utf-8")
    exact = {secret, *_base64_cores(data)}
    every_byte = "".join(f"%{byte:02x}" for byte in data)
    folded = {data.hex(), quote(secret, safe=""), quote(secret, safe="/"), every_byte}
    return frozenset({*((form, False) for form in exact), *((form.lower(), True) for form in folded)})


def fingerprints(credential: str, secret: str) -> frozenset[Fingerprint]:
    if len(secret) < MIN_LENGTH:
        return frozenset()
    return frozenset(
        Fingerprint(credential, len(form), folded, hashlib.sha256(form.encode("ascii")).hexdigest())
        for form, folded in encoded_forms(secret)
    )


def credential_in(texts: Iterable[str], known: Iterable[Fingerprint]) -> str | None:
    """The name of a credential one of ``texts`` holds in one of its forms; None: none does."""
    windows: dict[tuple[int, bool], dict[bytes, str]] = {}
    for found in known:
        windows.setdefault((found.length, found.folded), {})[bytes.fromhex(found.sha256)] = found.credential
    for text in texts:
        exact = "".join(text.split()).encode("utf-8", "surrogatepass")
        folded = exact.lower()  # ASCII letters only, as the forms were folded
        for (length, fold), digests in windows.items():
            named = _slide(folded if fold else exact, length, digests)
            if named is not None:
                return named
    return None


def _slide(subject: bytes, length: int, digests: dict[bytes, str]) -> str | None:
    view = memoryview(subject)
    sha256 = hashlib.sha256
    for start in range(len(subject) - length + 1):
        named = digests.get(sha256(view[start : start + length]).digest())
        if named is not None:
            return named
    return None


def _base64_cores(data: bytes) -> set[str]:
    """The characters of ``data``'s base64 that it alone decides, at each alignment: character i
    covers bits 6i to 6i+6 of the whole, and ``data`` is bits 8k to 8(k+n) after k bytes."""
    cores = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for before in range(3):
            encoded = encode(bytes(before) + data).decode("ascii")
            cores.add(encoded[-(-8 * before // 6) : 8 * (before + len(data)) // 6])
    return cores
