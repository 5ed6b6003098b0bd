"""core.doctor with plain values: what Claude Code's version and auth status mean."""

from __future__ import annotations

import json

from core.doctor import CheckStatus, auth_check, version_check


def test_a_supported_version_is_ok_and_an_older_one_is_refused() -> None:
    assert version_check("2.1.332 (Claude Code)\n", 0).status == CheckStatus.ok
    assert version_check("2.1.0 (Claude Code)", 0).status == CheckStatus.ok
    old = version_check("2.0.77 (Claude Code)", 0)
    assert old.status == CheckStatus.failing
    assert "older than 2.1.0" in old.detail
    assert version_check("1.0.128 (Claude Code)", 0).status == CheckStatus.failing


def test_a_program_that_says_no_version_is_failing() -> None:
    assert version_check("", None).status == CheckStatus.failing
    assert version_check("2.1.332 (Claude Code)", 1).status == CheckStatus.failing
    assert version_check("usage: claude", 0).status == CheckStatus.failing


def test_logged_in_is_ok_and_names_how() -> None:
    said = json.dumps({"loggedIn": True, "authMethod": "api_key", "apiKeySource": "ANTHROPIC_API_KEY"})
    check = auth_check(said, 0)
    assert check.status == CheckStatus.ok
    assert check.detail == "Claude Code can authenticate (api_key, from ANTHROPIC_API_KEY)"


def test_not_logged_in_is_failing_with_how_to_give_it_a_key_by_name() -> None:
    check = auth_check(json.dumps({"loggedIn": False, "authMethod": "none"}), 1)
    assert check.status == CheckStatus.failing
    assert "setup --worker-env ANTHROPIC_API_KEY" in check.advice


def test_an_answer_doctor_cannot_read_is_a_warning() -> None:
    assert auth_check("error: unknown command 'auth'", 1).status == CheckStatus.warning
    assert auth_check(json.dumps({"loggedIn": True}), 2).status == CheckStatus.warning
