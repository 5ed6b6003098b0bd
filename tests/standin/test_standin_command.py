"""``bin/connect standin`` as a real process: its first line, a post through it, a clean stop."""

from __future__ import annotations

import json
import selectors
import signal
import subprocess
from pathlib import Path

import pytest
import urllib3

from shell.basecamp.standin.server import StandIn
from shell.cli.main import build_parser, main
from shell.cli.standin import as_text, describe
from shell.errors import EXIT_UNAVAILABLE

CONNECT = Path(__file__).resolve().parents[2] / "bin" / "connect"


def first_line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            pytest.fail(f"bin/connect standin printed nothing in {timeout} s")
    return process.stdout.readline()


@pytest.mark.slow
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_the_command_serves_until_a_signal_and_exits_zero(stop_signal: signal.Signals) -> None:
    process = subprocess.Popen(
        [str(CONNECT), "standin", "--port", "0", "--world", "demo", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        summary = json.loads(first_line(process, timeout=30))
        project = summary["projects"][0]
        comments = f"{summary['account_url']}/recordings/{project['cards'][0]}/comments.json"
        headers = {
            "Authorization": f"Bearer {summary['token']}",
            "User-Agent": "StandInTests (tests@example.com)",
            "Content-Type": "application/json",
        }
        http = urllib3.PoolManager(retries=False, timeout=5)
        created = http.request("POST", comments, body=json.dumps({"content": "from a test"}), headers=headers)
        assert created.status == 201
        assert created.json()["creator"]["id"] == summary["agent_id"]
        listed = http.request("GET", comments, headers=headers)
        assert [comment["id"] for comment in listed.json()] == [created.json()["id"]]
        assert summary["base_url"].startswith("http://127.0.0.1:")
        assert len(summary["projects"]) == 3
        assert all(project["campfire"] for project in summary["projects"])
    finally:
        process.send_signal(stop_signal)
        _, errors = process.communicate(timeout=10)
    assert process.returncode == 0, errors


def test_the_readable_first_line_names_everything_a_client_needs() -> None:
    with StandIn(world="demo") as standin:
        line = as_text(describe(standin))
    world = standin.world
    assert "\n" not in line
    expected = [standin.base_url, str(world.account_id), world.token, str(world.agent.id), standin.control_secret]
    for project in world.projects:
        expected += [str(project.id), str(project.campfire_id), *map(str, project.recording_ids)]
    for text in expected:
        assert text in line


def test_a_port_already_taken_is_one_clear_line_and_exit_unavailable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with StandIn(world="empty") as taken:
        code = main(["standin", "--port", str(taken.port)])
    assert code == EXIT_UNAVAILABLE
    error = capsys.readouterr().err
    assert error.startswith(f"error: cannot listen on 127.0.0.1:{taken.port}")
    assert error.count("\n") == 1


def test_the_first_line_names_the_rate_limit_the_option_set() -> None:
    parser = build_parser()
    for option, expected in (
        ([], "50/10"),
        (["--rate-limit", "off"], "off"),
        (["--rate-limit", "5/1"], "5/1"),
    ):
        args = parser.parse_args(["standin", *option])
        with StandIn(world="empty", rate_limit=args.rate_limit) as standin:
            summary = describe(standin)
        assert summary["rate_limit"] == expected
        assert f"rate limit {expected}" in as_text(summary)
