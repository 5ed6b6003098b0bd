"""A person's name from Basecamp reaches ``setup``'s output (and ``run``'s refusal) with its
control characters escaped (``core.text.printable``): a hostile Basecamp, the stand-in behind a
proxy that renames the agent with an ANSI escape and a newline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from tests.support.hostile_basecamp import Answered, HostileBasecamp

HOSTILE_NAME = "Claude\x1b[2J\x1b[31m Agent\nerror: fake line"


def _renamed(answer: Answered) -> Answered:
    if not answer.path.endswith("/my/profile.json") or answer.status != 200:
        return answer
    person = json.loads(answer.body)
    person["name"] = HOSTILE_NAME
    return Answered(answer.path, answer.status, answer.headers, json.dumps(person).encode())


def test_setup_shows_the_agents_name_from_basecamp_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with StandIn(world="demo") as standin, HostileBasecamp(standin.base_url, _renamed) as hostile:
        token_file = tmp_path / "token"
        token_file.write_text(standin.world.token + "\n")
        token_file.chmod(0o600)
        code = connect([
            "setup", "--state-dir", str(tmp_path / "state"), "--base-url", hostile.base_url,
            "--account", str(standin.world.account_id), "--agent", str(standin.world.agent.id),
            "--token-file", str(token_file), "--operator", str(standin.world.people[0].id),
        ])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "\x1b" not in out
    assert "Claude\\x1b[2J\\x1b[31m Agent\\nerror: fake line: the token answers as the agent" in out
    assert not any(line.startswith("error: fake") for line in out.splitlines())
