"""``core.doctor``'s verdicts on plain values: which measured fact is ok, a warning or failing,
and that the report fails on failing alone."""

from __future__ import annotations

import string
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.configuration import RouteFacts
from core.doctor import (
    DISK_WARNING_BYTES,
    AnsweredAs,
    Check,
    CheckStatus,
    Handshake,
    LedgerFacts,
    LedgerTrouble,
    LockHolder,
    NotAsked,
    Reach,
    TokenFacts,
    TokenRefused,
    basecamp_check,
    configuration_check,
    disk_check,
    handshake_check,
    ledger_check,
    lock_check,
    pair_check,
    passed,
    report,
    route_checks,
    server_date,
    state_directory_check,
    token_check,
    worker_check,
)
from core.presentation.doctor_text import lines
from core.presentation.status_values import LOW_DISK_BYTES
from core.task_token import PROBE_PREFIX, is_probe, probe_marker_name

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
AGENT = 42


def test_the_report_fails_on_a_failing_check_and_never_on_a_warning() -> None:
    ok, warning, failing = (Check("a", CheckStatus.ok, "x"), Check("b", CheckStatus.warning, "y", "do"),
                            Check("c", CheckStatus.failing, "z", "fix"))  # fmt: skip
    assert passed([ok, warning])
    assert not passed([ok, warning, failing])
    assert report([ok, failing]) == {
        "checks": [
            {"name": "a", "status": "ok", "detail": "x", "advice": ""},
            {"name": "c", "status": "failing", "detail": "z", "advice": "fix"},
        ],
        "ok": False,
    }


def test_the_text_is_one_line_a_check_then_what_it_comes_to() -> None:
    shown = lines([Check("lock", CheckStatus.ok, "free"), Check("route 7", CheckStatus.failing, "/x does not exist", "mk")])
    assert shown == [
        "ok       lock     free",
        "failing  route 7  /x does not exist -- mk",
        "doctor: 1 failing, 0 warnings",
    ]
    assert lines([Check("lock", CheckStatus.warning, "w", "a")])[-1] == "doctor: nothing failing (1 checks, 1 warning)"


def test_a_configuration_that_does_not_load_or_names_other_ids_fails() -> None:
    assert configuration_check("/s/config.json", "open to others", (0, 0), (None, None)).status == CheckStatus.failing
    other = configuration_check("/s/config.json", None, (999, 41), (999, AGENT))
    assert (other.status, other.detail) == (
        CheckStatus.failing, "/s/config.json names account 999 and agent 41, not account 999 and agent 42",
    )  # fmt: skip
    assert configuration_check("/s/config.json", None, (999, AGENT), (999, AGENT)).status == CheckStatus.ok
    assert configuration_check("/s/config.json", None, (999, AGENT), (None, None)).status == CheckStatus.ok


def test_a_state_directory_missing_loose_or_not_writable_fails() -> None:
    assert state_directory_check("/s", False, None, False).status == CheckStatus.failing
    assert state_directory_check("/s", True, "open to others", True).status == CheckStatus.failing
    assert state_directory_check("/s", True, None, False).status == CheckStatus.failing
    assert state_directory_check("/s", True, None, True).status == CheckStatus.ok


def test_a_route_directory_missing_not_a_directory_or_not_writable_fails() -> None:
    missing, file, readonly, good = route_checks([
        RouteFacts(1, "/w/1", exists=False, is_directory=False, writable=False),
        RouteFacts(2, "/w/2", exists=True, is_directory=False, writable=True),
        RouteFacts(3, "/w/3", exists=True, is_directory=True, writable=False),
        RouteFacts(4, "/w/4", exists=True, is_directory=True, writable=True),
    ])
    assert (missing.name, missing.status) == ("route 1", CheckStatus.failing)
    assert missing.detail == "routes.1.directory: /w/1 does not exist"  # core.configuration's words
    assert "bin/connect setup --route 1=DIRECTORY" in missing.advice
    assert (file.status, file.detail) == (CheckStatus.failing, "routes.2.directory: /w/2 is not a directory")
    assert (readonly.status, readonly.detail) == (
        CheckStatus.failing,
        "routes.3.directory: /w/3 is not writable by this user",
    )
    assert good.status == CheckStatus.ok
    (none,) = route_checks([])
    assert (none.name, none.status) == ("routes", CheckStatus.warning)


def test_a_worker_program_not_found_fails() -> None:
    assert worker_check("claude", None, None).detail == "the program 'claude' is not found on PATH"
    assert worker_check("/opt/x", None, None).detail == "the program '/opt/x' is not found at that path"
    assert worker_check("claude", None, None).status == CheckStatus.failing
    assert worker_check("", None, "worker_command: unknown placeholder").status == CheckStatus.failing
    assert worker_check("claude", "/usr/bin/claude", None).status == CheckStatus.ok


def test_the_handshake_is_ok_only_when_it_completed() -> None:
    done = handshake_check(Handshake(True, 1.25, signals=("SIGTERM",)))
    assert (done.status, done.detail) == (
        CheckStatus.ok,
        "completed the MCP handshake with bin/connect mcp in 1.2 s; its process group ended (SIGTERM)",
    )
    assert handshake_check(Handshake(True, 1.0, survivors=True)).status == CheckStatus.warning
    exited = handshake_check(Handshake(False, 0.4, ended="exited 1", stderr_tail="no such option"))
    assert (exited.status, exited.detail) == (
        CheckStatus.failing, "the worker exited 1 before completing the MCP handshake: no such option",
    )  # fmt: skip
    late = handshake_check(Handshake(False, 30.0, timed_out=True))
    assert (late.status, late.detail) == (CheckStatus.failing, "no MCP handshake with bin/connect mcp within 30 s")
    assert handshake_check(Handshake(False, 0.0, spawn_failed="ENOENT")).status == CheckStatus.failing


def test_a_worker_that_left_processes_outside_its_group_is_named_and_warned_of() -> None:
    left = handshake_check(Handshake(True, 1.25, signals=("SIGTERM",), strays=2))
    assert left.status == CheckStatus.warning
    assert left.detail == (
        "completed the MCP handshake with bin/connect mcp in 1.2 s; its process group ended (SIGTERM); it"
        " left 2 processes outside its group (a session of its own), found and ended too"
    )
    assert "no setsid" in left.advice
    kept = handshake_check(Handshake(True, 1.0, strays=1, strays_survived=True))
    assert (kept.status, kept.detail.endswith("processes it started outside its group outlived SIGKILL")) == (
        CheckStatus.warning, True,
    )  # fmt: skip
    exited = handshake_check(Handshake(False, 0.4, ended="exited 0", strays=1))
    assert (exited.status, exited.detail) == (
        CheckStatus.failing, "the worker exited 0 before completing the MCP handshake; it left 1 process outside"
        " its group (a session of its own), found and ended too",
    )  # fmt: skip


def test_the_ledger_absent_is_ok_behind_a_warning_and_damaged_or_too_new_fails() -> None:
    assert ledger_check("/l", LedgerFacts(exists=False)).status == CheckStatus.ok
    current = ledger_check("/l", LedgerFacts(True, version=13, expected=13))
    assert (current.status, current.detail) == (CheckStatus.ok, "/l: schema 13 (current), quick_check ok")
    assert ledger_check("/l", LedgerFacts(True, version=13, expected=13, full_check=True)).detail.endswith(
        "integrity_check ok"
    )
    damaged = ledger_check("/l", LedgerFacts(True, version=13, expected=13, problems=("page 4", "page 5")))
    assert (damaged.status, damaged.detail) == (CheckStatus.failing, "/l is damaged (quick_check: page 4 and 1 more)")
    verdicts = {trouble: ledger_check("/l", LedgerFacts(True, trouble, "said")).status for trouble in LedgerTrouble}
    assert verdicts == {
        LedgerTrouble.out_of_date: CheckStatus.warning,
        LedgerTrouble.busy: CheckStatus.warning,
        LedgerTrouble.too_new: CheckStatus.failing,
        LedgerTrouble.damaged: CheckStatus.failing,
        LedgerTrouble.unusable: CheckStatus.failing,
    }


@pytest.mark.parametrize(
    ("free", "verdict"),
    [
        (0, CheckStatus.failing),
        (LOW_DISK_BYTES - 1, CheckStatus.failing),
        (LOW_DISK_BYTES, CheckStatus.warning),
        (DISK_WARNING_BYTES - 1, CheckStatus.warning),
        (DISK_WARNING_BYTES, CheckStatus.ok),
    ],
)
def test_free_disk_below_the_thresholds_warns_then_fails(free: int, verdict: CheckStatus) -> None:
    assert disk_check("/s", (free, 10**12)).status == verdict


def test_an_unmeasured_disk_is_a_warning() -> None:
    assert disk_check("/s", None).status == CheckStatus.warning


def test_the_lock_held_by_a_running_connector_is_ok_and_names_it() -> None:
    assert lock_check(None).detail == "free: no connector runs on this state directory"
    held = lock_check(LockHolder(4242, "2026-12-01T12:00:00Z", True))
    assert (held.status, held.detail) == (
        CheckStatus.ok, "held by pid 4242 since 2026-12-01T12:00:00Z: a connector runs here",
    )  # fmt: skip
    gone = lock_check(LockHolder(4242, "2026-12-01T12:00:00Z", False))
    assert (gone.status, gone.detail.startswith("free: pid 4242")) == (CheckStatus.ok, True)
    unusable = lock_check(LockHolder(4242, "t", True, "config.json names another agent"))
    assert unusable.status == CheckStatus.warning


def test_a_pair_served_from_another_state_directory_fails() -> None:
    served = pair_check((999, AGENT), "/here", "/there", None)
    assert (served.status, served.advice) == (
        CheckStatus.failing, "run that one, or move the pair here: bin/connect setup --state-dir /here --force",
    )  # fmt: skip
    assert pair_check((999, AGENT), "/here", None, None).status == CheckStatus.ok


BARE = TokenFacts("/t")
LOGIN = TokenFacts("/t", expires_at=NOW + timedelta(days=10, hours=12))


def test_a_token_that_acts_as_the_agent_is_ok_with_its_days_left_and_a_bare_one_warns() -> None:
    login = token_check(LOGIN, AGENT, AnsweredAs(AGENT, "Claude"), NOW)
    assert (login.status, login.detail) == (
        CheckStatus.ok,
        "acts as the agent 42 (Claude); expires in 10.5 days (2026-12-12T00:00:00.000000000Z), refreshed before then",
    )
    bare = token_check(BARE, AGENT, AnsweredAs(AGENT, "Claude"), NOW)
    assert bare.status == CheckStatus.warning
    assert "bin/connect login" in bare.advice


def test_a_token_refused_or_acting_as_someone_else_fails() -> None:
    other = token_check(BARE, AGENT, AnsweredAs(7, "Ada"), NOW)
    assert (other.status, other.detail) == (
        CheckStatus.failing, "the token in /t acts as person 7 (Ada), not the agent 42",
    )  # fmt: skip
    assert token_check(BARE, AGENT, TokenRefused(), NOW).status == CheckStatus.failing
    assert token_check(LOGIN, AGENT, TokenRefused(), NOW).status == CheckStatus.failing  # not expired: refused
    assert token_check(TokenFacts("/t", problem="open to others"), AGENT, NotAsked(""), NOW).status == CheckStatus.failing


def test_an_expired_login_token_refused_is_a_warning_the_connector_refreshes_it() -> None:
    expired = TokenFacts("/t", expires_at=NOW - timedelta(hours=1))
    assert token_check(expired, AGENT, TokenRefused(), NOW).status == CheckStatus.warning


def test_a_token_not_asked_is_a_warning() -> None:
    assert token_check(BARE, AGENT, NotAsked("Basecamp did not say"), NOW).status == CheckStatus.warning


def test_basecamp_not_answering_fails() -> None:
    down = basecamp_check("http://b", Reach(answered=False, error="connection refused"))
    assert (down.status, down.detail) == (CheckStatus.failing, "http://b did not answer: connection refused")
    assert basecamp_check("http://b", Reach(answered=False, asked=False, error="no token")).status == CheckStatus.warning


@pytest.mark.parametrize(
    ("skew", "verdict"),
    [(0, CheckStatus.ok), (60, CheckStatus.ok), (-60, CheckStatus.ok), (61, CheckStatus.warning), (-61, CheckStatus.warning),
     (3600, CheckStatus.warning)],
)  # fmt: skip
def test_a_clock_skew_beyond_a_minute_either_way_is_a_warning(skew: int, verdict: CheckStatus) -> None:
    reach = Reach(answered=True, status=200, server_date=NOW, now=NOW + timedelta(seconds=skew))
    assert basecamp_check("http://b", reach).status == verdict


def test_the_skew_says_which_way() -> None:
    ahead = Reach(answered=True, status=200, server_date=NOW, now=NOW + timedelta(seconds=90))
    assert basecamp_check("http://b", ahead).detail.endswith("this machine's clock is 90 s ahead of Basecamp's")
    behind = Reach(answered=True, status=401, server_date=NOW, now=NOW - timedelta(seconds=90))
    assert basecamp_check("http://b", behind).detail.endswith("90 s behind Basecamp's")
    assert basecamp_check("http://b", Reach(answered=True, status=200)).status == CheckStatus.ok


def test_an_http_date_is_read_and_anything_else_is_none() -> None:
    assert server_date("Tue, 01 Dec 2026 12:00:00 GMT") == NOW
    assert server_date("") is None
    assert server_date("yesterday") is None


URL_SAFE = string.ascii_letters + string.digits + "-_"


def test_no_task_token_is_ever_a_probe_token() -> None:
    """A task's token is URL-safe base64 (``secrets.token_urlsafe``): the probe's prefix holds a
    character it never does."""
    assert set(PROBE_PREFIX) - set(URL_SAFE)


@given(st.text(alphabet=URL_SAFE, min_size=1, max_size=64))
def test_a_url_safe_token_is_never_a_probe(token: str) -> None:
    assert not is_probe(token)


def test_a_probe_marker_is_named_from_the_token_and_names_no_secret() -> None:
    token = PROBE_PREFIX + "abc"
    assert is_probe(token)
    assert probe_marker_name(token).startswith("doctor-probe-")
    assert "abc" not in probe_marker_name(token)
    assert probe_marker_name(token) != probe_marker_name(PROBE_PREFIX + "abd")
