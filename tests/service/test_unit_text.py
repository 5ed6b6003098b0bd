"""The unit ``bin/connect unit`` prints, from plain values (``core.unit``): the restart policy from
the exit codes a person must act on, a stop timeout above the shutdown bound, the file system
read-only but for what the connector writes, PrivateTmp only where it hides no pair lock, the
worker's variables by name alone, and words quoted as systemd splits them."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core.unit import UnitPlan, _word, unit_problem, unit_text

PLAN = UnitPlan(
    account_id=5, agent_id=6, command=("/opt/connector/bin/connect", "run", "--state-dir", "/srv/state"),
    state_directory="/srv/state", token_file="/etc/connector/agent.token",
    route_directories=("/srv/work/a", "/srv/work/b"), runtime_directory="/tmp/basecamp-connector-1000",
    runtime_variable=None, worker_variables=("ANTHROPIC_API_KEY",), claude_code=True, user_name=None,
    shutdown_bound=timedelta(seconds=60), no_restart=(2, 3),
)  # fmt: skip


def _settings(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            found.setdefault(key, []).append(value)
    return found


def test_a_user_unit_is_notify_with_a_watchdog_restarted_on_failure_but_never_on_what_a_person_must_mend() -> None:
    settings = _settings(unit_text(PLAN))
    assert settings["Type"] == ["notify"]
    assert settings["WatchdogSec"] == ["60s"]
    assert settings["Restart"] == ["on-failure"]
    assert settings["RestartPreventExitStatus"] == ["2 3"]
    assert _settings(unit_text(replace(PLAN, no_restart=(3, 4))))["RestartPreventExitStatus"] == ["3 4"]
    assert settings["ExecStart"] == ["/opt/connector/bin/connect run --state-dir /srv/state"]
    assert settings["WantedBy"] == ["default.target"]
    assert "User" not in settings
    assert "loginctl enable-linger" in unit_text(PLAN)


def test_sigterm_goes_to_the_connector_alone_and_the_stop_timeout_is_above_the_shutdown_bound() -> None:
    settings = _settings(unit_text(PLAN))
    assert settings["KillSignal"] == ["SIGTERM"]
    assert settings["KillMode"] == ["mixed"]  # the connector stops its workers itself
    for bound in (60, 5, 0.5, 600):
        stop = _settings(unit_text(replace(PLAN, shutdown_bound=timedelta(seconds=bound))))["TimeoutStopSec"]
        assert float(stop[0].removesuffix("s")) > bound


def test_the_file_system_is_read_only_but_for_what_the_connector_and_its_worker_write() -> None:
    settings = _settings(unit_text(PLAN))
    assert settings["NoNewPrivileges"] == ["yes"]
    assert settings["ProtectSystem"] == ["strict"]
    assert settings["ReadWritePaths"] == ["/srv/state /etc/connector /srv/work/a /srv/work/b /tmp -%h"]
    assert settings["PrivateTmp"] == ["no"], "a private /tmp would hide the pair lock from a connector run by hand"
    elsewhere = replace(PLAN, runtime_directory="/run/user/1000/basecamp-connector", claude_code=False,
                        runtime_variable=("BASECAMP_CONNECTOR_RUNTIME_DIR", "/run/user/1000/basecamp-connector"))
    settings = _settings(unit_text(elsewhere))
    assert settings["PrivateTmp"] == ["yes"]
    assert settings["ReadWritePaths"] == [
        "/srv/state /etc/connector /srv/work/a /srv/work/b /run/user/1000/basecamp-connector"]
    assert settings["Environment"] == ["BASECAMP_CONNECTOR_RUNTIME_DIR=/run/user/1000/basecamp-connector"]
    assert _settings(unit_text(replace(PLAN, runtime_directory="/var/tmp/x")))["PrivateTmp"] == ["no"]


def test_the_workers_variables_are_named_and_their_values_are_an_environment_files() -> None:
    text = unit_text(PLAN)
    assert "ANTHROPIC_API_KEY" in text
    assert _settings(text)["EnvironmentFile"] == ["/srv/state/environment"]
    assert "EnvironmentFile" not in unit_text(replace(PLAN, worker_variables=()))


def test_a_system_unit_runs_as_its_user_and_is_wanted_by_multi_user() -> None:
    settings = _settings(unit_text(replace(PLAN, user_name="connector")))
    assert settings["User"] == ["connector"]
    assert settings["WantedBy"] == ["multi-user.target"]
    assert settings["After"] == ["network-online.target"]
    assert "After" not in _settings(unit_text(PLAN)), "a user manager has no network-online.target"


def test_words_are_escaped_and_quoted_as_systemd_splits_them() -> None:
    assert _word("/a/b") == "/a/b"
    assert _word("/a b") == '"/a b"'
    assert _word("/50%") == "/50%%"
    assert _word("/$HOME", command=True) == "/$$HOME"
    assert _word("/$HOME") == "/$HOME"
    assert _word('/a"b\\c') == '"/a\\"b\\\\c"'
    assert _word("") == '""'


def test_a_path_a_unit_cannot_name_is_refused_with_the_path() -> None:
    assert unit_problem(PLAN) is None
    relative = unit_problem(replace(PLAN, route_directories=("work",)))
    assert relative is not None
    assert "'work' is not an absolute path" in relative
    control = unit_problem(replace(PLAN, state_directory="/srv/st\nate"))
    assert control is not None
    assert "control character" in control
