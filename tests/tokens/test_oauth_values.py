"""core.oauth: the token file's two forms, Launchpad's answer, and when a refresh is due."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from core.oauth import (
    Credentials,
    app,
    authorize_url,
    from_token_answer,
    read_token_text,
    refresh_due,
    refresh_form,
    to_text,
)

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
ISSUED = Credentials(
    "access-secret", "refresh-secret", NOW + timedelta(seconds=1209600), NOW,
    "https://launchpad.37signals.com/authorization/token", "client", "client-secret",
)  # fmt: skip


def test_a_bare_token_stays_a_bare_token() -> None:
    assert read_token_text("abc123\n") == "abc123"


def test_the_logins_credentials_read_back_as_written() -> None:
    assert read_token_text(to_text(ISSUED)) == ISSUED


@pytest.mark.parametrize(
    ("text", "said"),
    [("", "is empty"), ("two words", "holds more than one word"), ("{not json", "neither a bare token"),
     ('{"version": 1}', "has no usable access_token"), ('{"version": 2}', "is not version 1")],
)  # fmt: skip
def test_a_token_file_that_is_neither_is_refused_naming_no_secret(text: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        read_token_text(text)


def test_no_secret_is_in_the_repr() -> None:
    shown = repr(ISSUED)
    assert all(secret not in shown for secret in ("access-secret", "refresh-secret", "client-secret"))


def test_a_two_week_token_is_refreshed_a_day_early() -> None:
    expires = ISSUED.expires_at
    assert not refresh_due(ISSUED, expires - timedelta(days=1, seconds=1))
    assert refresh_due(ISSUED, expires - timedelta(days=1))


def test_a_short_token_is_refreshed_a_quarter_of_its_life_early() -> None:
    short = replace(ISSUED, expires_at=NOW + timedelta(seconds=8))
    assert not refresh_due(short, NOW + timedelta(seconds=5.9))
    assert refresh_due(short, NOW + timedelta(seconds=6))


def test_a_refresh_answer_without_a_refresh_token_keeps_the_old_one() -> None:
    later = NOW + timedelta(hours=1)
    fresh = from_token_answer({"access_token": "new", "expires_in": 60}, later, ISSUED)
    assert (fresh.access_token, fresh.refresh_token) == ("new", "refresh-secret")
    assert (fresh.obtained_at, fresh.expires_at) == (later, later + timedelta(seconds=60))
    rotated = from_token_answer({"access_token": "n", "expires_in": 60, "refresh_token": "r2"}, later, ISSUED)
    assert rotated.refresh_token == "r2"


@pytest.mark.parametrize("answer", [[], {"expires_in": 5}, {"access_token": "a"}, {"access_token": "a", "expires_in": 0}])
def test_a_token_answer_without_a_token_or_a_life_is_refused(answer: object) -> None:
    with pytest.raises(ValueError, match="the token answer"):
        from_token_answer(answer, NOW, ISSUED)


def test_the_forms_use_the_standard_grant_names() -> None:
    assert refresh_form(ISSUED)["grant_type"] == "refresh_token"
    url = authorize_url("https://launchpad.37signals.com", "client", "http://127.0.0.1:8765/callback", "st")
    assert url.startswith("https://launchpad.37signals.com/authorization/new?response_type=code&client_id=client")
    assert app("u", "c", "s", NOW).client_secret == "s"
