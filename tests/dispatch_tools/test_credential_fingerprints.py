"""``core.fingerprints`` with plain values: a credential found in each listed encoding, anywhere in
any text, from its fingerprints alone; a text without it passes."""

from __future__ import annotations

import base64
import string
from collections.abc import Callable
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.fingerprints import MIN_LENGTH, credential_in, fingerprints
from core.worker_words import said

# shaped like Basecamp's: base64 with '+', '/' and '=', then "--" and a hex signature
ACCESS = "BAhbB0kiAbB7ImNsaWVudF9+aWQiOiI/YWJjIn0GOgZFVEkiDGVuY3J5cHRlZAY7AEY=--8f2c0a9b41d7e3f5a6c8"
TASK = "q3Vb1kZ-e9_Lx0PaTy7mWn4sRc2HdUo8GfJiKlMnOpQ"
KNOWN = fingerprints("the agent's access token", ACCESS) | fingerprints("a task token", TASK)


def _hex(secret: str) -> str:
    return secret.encode().hex()


def _every_byte(secret: str) -> str:
    return "".join(f"%{byte:02X}" for byte in secret.encode())


ENCODINGS: dict[str, Callable[[str], str]] = {
    "as is": lambda secret: secret,
    "base64": lambda secret: base64.b64encode(secret.encode()).decode(),
    "base64 after one byte": lambda secret: base64.b64encode(b"x" + secret.encode() + b"!").decode(),
    "base64 after two bytes": lambda secret: base64.b64encode(b"t=" + secret.encode()).decode(),
    "base64 url-safe": lambda secret: base64.urlsafe_b64encode(b"token: " + secret.encode()).decode(),
    "base64 url-safe unpadded": lambda secret: base64.urlsafe_b64encode(secret.encode()).decode().rstrip("="),
    "base64 wrapped at 76": lambda secret: base64.encodebytes(b'{"access_token":"' + secret.encode() + b'"}').decode(),
    "url-encoded": lambda secret: quote(secret, safe=""),
    "url-encoded keeping /": lambda secret: quote(secret, safe="/"),
    "url-encoded lowercase": lambda secret: quote(secret, safe="").lower(),
    "every byte url-encoded": _every_byte,
    "every byte url-encoded lowercase": lambda secret: _every_byte(secret).lower(),
    "hex": _hex,
    "hex uppercase": lambda secret: _hex(secret).upper(),
    "hex mixed case": lambda secret: "".join(c.upper() if i % 3 else c for i, c in enumerate(_hex(secret))),
    "hex spaced in pairs": lambda secret: " ".join(_hex(secret)[i : i + 2] for i in range(0, 2 * len(secret), 2)),
}


@pytest.mark.parametrize("encode", list(ENCODINGS.values()), ids=list(ENCODINGS))
@pytest.mark.parametrize(("secret", "name"), [(ACCESS, "the agent's access token"), (TASK, "a task token")])
def test_a_credential_is_found_in_each_encoding_inside_other_words(
    encode: Callable[[str], str], secret: str, name: str
) -> None:
    text = f"Here is what I found:\n\n```\n{encode(secret)}\n```\nHope that helps."
    assert credential_in([text], KNOWN) == name
    assert credential_in(["nothing to see", f"glued{encode(secret)}glued"], KNOWN) == name


@pytest.mark.parametrize("encode", list(ENCODINGS.values()), ids=list(ENCODINGS))
def test_words_without_a_credential_pass_and_one_cut_short_is_not_it(encode: Callable[[str], str]) -> None:
    assert credential_in([f"Done: {encode('an ordinary sentence of no secret')}"], KNOWN) is None
    assert credential_in([encode(ACCESS[:-1]), encode(TASK[1:])], KNOWN) is None


def test_a_fingerprint_is_a_digest_and_a_length_never_the_credential() -> None:
    for found in KNOWN:
        assert len(found.sha256) == 64
        assert ACCESS not in repr(found)
        assert TASK not in repr(found)
    assert fingerprints("short", "x" * (MIN_LENGTH - 1)) == frozenset()


SECRETS = st.text(string.ascii_letters + string.digits + "-_=+/.~:!", min_size=MIN_LENGTH, max_size=80)


@given(SECRETS, st.text(max_size=200), st.text(max_size=200), st.sampled_from(sorted(ENCODINGS)))
def test_any_credential_anywhere_in_any_text_in_any_encoding_is_found(
    secret: str, before: str, after: str, encoding: str
) -> None:
    known = fingerprints("the client secret", secret)
    assert credential_in([before + ENCODINGS[encoding](secret) + after], known) == "the client secret"


@given(st.text(max_size=2000))
def test_a_text_without_a_credential_passes(text: str) -> None:
    assert credential_in([text], KNOWN) is None


def test_a_credential_split_by_markup_or_controls_is_found_in_what_a_reader_would_be_shown() -> None:
    split = f"Found it: {TASK[:15]}**{TASK[15:28]}**{TASK[28:]}"  # emphasis between letters: shown joined
    assert credential_in([split], KNOWN) is None
    assert credential_in(said(split), KNOWN) == "a task token"
    assert credential_in(said("\x1b".join(TASK)), KNOWN) == "a task token"
