"""``core.configuration``: defaults, durations, every problem one line, merge keeps the rest."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from returns.result import Failure

from core.configuration import Configuration, TrustMode, missing, parse_configuration, to_mapping
from core.ids import MAX_ID
from core.setup_changes import Changes, merge
from core.timestamps import MAX_DURATION, format_duration, parse_duration

MINIMAL: dict[str, Any] = {
    "account_id": 999,
    "base_url": "https://3.basecampapi.com",
    "agent_id": 42,
    "token_file": "/home/agent/.token",
}


def parsed(data: Any) -> Configuration:
    result = parse_configuration(data)
    assert isinstance(result, Configuration), result
    return result


def problems(data: Any) -> tuple[str, ...]:
    result = parse_configuration(data)
    assert isinstance(result, tuple), result
    return result


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90m", timedelta(minutes=90)),
        ("30s", timedelta(seconds=30)),
        ("2h", timedelta(hours=2)),
        ("1h30m", timedelta(minutes=90)),
        ("500ms", timedelta(milliseconds=500)),
        (" 10m ", timedelta(minutes=10)),
    ],
)
def test_durations_parse(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "0s", "90", "m", "-5m", "1.5h", "10 m", "5d", "30sm", "ms"])
def test_bad_durations_are_refused(text: str) -> None:
    assert parse_duration(text) is None


def test_a_duration_is_at_most_a_year_and_a_larger_one_never_overflows() -> None:
    assert parse_duration("8784h") == MAX_DURATION  # 366 days
    for text in ("8785h", "99999999h", "9" * 40 + "h", "9" * 40 + "ms"):
        assert parse_duration(text) is None


def test_an_id_is_at_most_what_the_ledger_can_store() -> None:
    assert parsed({**MINIMAL, "account_id": MAX_ID}).account_id == MAX_ID
    assert problems({**MINIMAL, "account_id": MAX_ID + 1}) == (
        f"account_id: expected a positive integer id up to {MAX_ID}, not {MAX_ID + 1}",
    )
    assert problems({**MINIMAL, "agent_id": "9" * 30})[0].startswith("agent_id: expected a positive integer id")


@pytest.mark.parametrize("text", ["90m", "30s", "2h", "1h30m", "500ms", "1h0m5s", "61m"])
def test_durations_write_back_as_they_read(text: str) -> None:
    value = parse_duration(text)
    assert value is not None
    assert parse_duration(format_duration(value)) == value


def test_defaults_fill_what_is_left_out() -> None:
    configuration = parsed(MINIMAL)
    assert configuration.trust.mode is TrustMode.operator
    assert configuration.trust.operator_id is None
    assert configuration.routes == ()
    assert configuration.worker_command is None
    assert configuration.concurrency == 2
    assert configuration.task_deadline == timedelta(minutes=90)
    assert configuration.timings.guard_delay == timedelta(seconds=30)
    assert configuration.timings.still_running == timedelta(minutes=10)
    assert configuration.timings.reconcile_after == timedelta(seconds=60)


def test_the_json_form_reads_back_unchanged() -> None:
    configuration = parsed(
        MINIMAL
        | {
            "trust": {"mode": "allowlist", "operator_id": 7, "allow": [8, 9]},
            "routes": {"1001": {"directory": "/src/app", "class": "backend", "watch_completions": True}},
            "worker_command": ["claude", "-p", "{prompt}"],
            "concurrency": 4,
            "task_deadline": "2h",
            "timings": {"guard_delay": "2s", "still_running": "5s", "reconcile_after": "3s"},
            "unsafe_test_timings": True,
            "worker_env": ["ANTHROPIC_API_KEY"],
        }
    )
    assert parsed(to_mapping(configuration)) == configuration
    assert to_mapping(configuration)["timings"] == {"guard_delay": "2s", "still_running": "5s", "reconcile_after": "3s"}


def test_every_problem_is_reported_each_on_one_line() -> None:
    found = problems(
        {
            "account_id": 0,
            "base_url": "http://basecamp.example.com",
            "agent_id": "x",
            "token_file": "relative/token",
            "trust": {"mode": "everyone", "operator_id": -1, "allow": ["a"]},
            "routes": {"abc": {"directory": "relative"}},
            "concurrency": 0,
            "task_deadline": "forever",
            "timings": {"guard_delay": "0s", "bogus": "1s"},
            "colour": "blue",
        }
    )
    assert all("\n" not in line for line in found)
    expected_starts = [
        "colour: unknown key",
        "account_id:",
        "agent_id:",
        "base_url: Basecamp must be reached over https",
        "token_file: expected an absolute path",
        "trust.mode:",
        "trust.operator_id:",
        "trust.allow[0]:",
        "routes: project 'abc'",
        "routes.abc.directory: expected an absolute path",
        "concurrency:",
        "task_deadline:",
        "timings.bogus: unknown key",
        "timings.guard_delay:",
    ]
    for start in expected_starts:
        assert any(line.startswith(start) for line in found), (start, found)
    assert len(found) == len(expected_starts)


def test_required_fields_are_named_with_their_flag() -> None:
    assert problems({}) == (
        "account_id: missing (--account ID)",
        "base_url: missing (--base-url URL)",
        "agent_id: missing (--agent ID)",
        "token_file: missing (--token-file PATH)",
    )


@pytest.mark.parametrize(
    "url",
    ["https://3.basecampapi.com/999", "ftp://example.com", "https://", "not a url", "https://x.com?q=1", "http://[abc"],
)
def test_a_base_url_is_an_origin(url: str) -> None:
    assert any(line.startswith("base_url:") for line in problems(MINIMAL | {"base_url": url}))


@pytest.mark.parametrize("mode", [[], {}, 3, "owner"])
def test_a_trust_mode_that_is_none_of_the_modes_is_a_problem_line(mode: object) -> None:
    assert any(line.startswith("trust.mode: expected one of") for line in problems(MINIMAL | {"trust": {"mode": mode}}))


def test_http_is_allowed_to_loopback_and_a_trailing_slash_is_dropped() -> None:
    assert parsed(MINIMAL | {"base_url": "http://127.0.0.1:8080/"}).base_url == "http://127.0.0.1:8080"


def test_the_agent_cannot_be_its_own_operator_or_allowed() -> None:
    found = problems(MINIMAL | {"trust": {"operator_id": 42, "allow": [42]}})
    assert len(found) == 2


def test_a_newer_version_is_refused() -> None:
    assert problems(MINIMAL | {"version": 2}) == ("version: this program reads version 1, not 2",)


def test_merge_keeps_what_it_is_not_told_to_change() -> None:
    first = merge(
        {},
        Changes(
            account_id="999", base_url="https://3.basecampapi.com", agent_id="42", token_file="/t",
            operator_id="7", routes=("1001=/src/app", "1002=/src/web"), classes=("1001=backend",),
            watch_completions=("1001",), guard_delay="12s",
        ),
    ).unwrap()
    second = merge(to_mapping(first), Changes(concurrency="3", remove_routes=("1002",))).unwrap()
    assert second.concurrency == 3
    assert second.trust.operator_id == 7
    assert second.timings.guard_delay == timedelta(seconds=12)
    assert [route.project_id for route in second.routes] == [1001]
    route = second.route(1001)
    assert route is not None
    assert (route.directory, route.work_class, route.watch_completions) == ("/src/app", "backend", True)
    # A route moved to a new directory keeps its class and watch.
    third = merge(to_mapping(second), Changes(routes=("1001=/elsewhere",))).unwrap()
    assert third.route(1001) == type(route)(1001, "/elsewhere", "backend", True)


def test_merge_changes_that_cannot_apply_are_problem_lines() -> None:
    result = merge(
        to_mapping(parsed(MINIMAL)),
        Changes(
            classes=("5=x",), watch_completions=("6",), remove_routes=("7",), routes=("nodir",),
            allow=("zero",), concurrency="many",
        ),
    )
    assert isinstance(result, Failure)
    lines = result.failure()
    assert len(lines) == 6, lines
    assert all("\n" not in line for line in lines)


def test_missing_says_what_is_still_lacking_one_line_each() -> None:
    lines = missing(parsed(MINIMAL | {"trust": {"mode": "allowlist"}}))
    assert [line.split(":")[0] for line in lines] == ["no operator", "allowlist trust with no one allowed", "no route"]
    assert "holding reply" in lines[-1]
    complete = parsed(MINIMAL | {"trust": {"operator_id": 7}, "routes": {"1": {"directory": "/x"}}})
    assert missing(complete) == ()


def test_timings_below_the_reference_floors_are_refused_unless_the_unsafe_option_lifts_them() -> None:
    short = {"task_deadline": "30s", "timings": {"guard_delay": "2s", "still_running": "5s", "reconcile_after": "59s"}}
    found = problems(MINIMAL | short)
    assert [line.split(":")[0] for line in found] == [
        "task_deadline", "timings.guard_delay", "timings.still_running", "timings.reconcile_after"
    ]
    assert "at least 1m" in found[-1]
    assert "--unsafe-test-timings" in found[-1]
    assert parsed(MINIMAL | short | {"unsafe_test_timings": True}).timings.reconcile_after == timedelta(seconds=59)
    assert parsed(MINIMAL | {"timings": {"reconcile_after": "60s", "guard_delay": "10s", "still_running": "1m"},
                             "task_deadline": "1m"}).timings.reconcile_after == timedelta(seconds=60)


def test_worker_env_holds_names_never_the_task_token_variable() -> None:
    found = problems(MINIMAL | {"worker_env": ["A=B", "BASECAMP_CONNECT_TASK_TOKEN"]})
    assert found == (
        "worker_env: 'A=B' is not an environment variable name",
        "worker_env: BASECAMP_CONNECT_TASK_TOKEN is the connector's own and is never handed to a worker",
    )


@pytest.mark.parametrize("name", ["BASECAMP_CLIENT_SECRET", "BASECAMP_CONNECTOR_RUNTIME_DIR", "BASECAMP_ANYTHING"])
def test_worker_env_never_names_a_variable_of_the_connectors_own(name: str) -> None:
    assert problems(MINIMAL | {"worker_env": [name]}) == (
        f"worker_env: {name} is the connector's own and is never handed to a worker",
    )


@pytest.mark.parametrize("name", ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_"])
def test_worker_env_never_names_a_variable_of_the_dynamic_loaders(name: str) -> None:
    assert problems(MINIMAL | {"worker_env": [name, "LDFLAGS"]}) == (
        f"worker_env: {name} steers the dynamic loader of every program the worker runs: never handed to a worker",
    )
