"""``bin/connect -v run --log-format json`` as a real process against the stand-in, a mention
answered by the bundled worker, a SIGHUP and a SIGUSR1 on the way: every line of stdout and of stderr is one JSON object with the
head (time, level, logger, message), the transition lines and the log lines carry their ids as
fields, and no line holds the agent's token, the task's token or the stand-in's control secret."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.log_lines import HEAD
from core.task_token import TASK_TOKEN_ENV
from shell.basecamp.standin.server import StandIn
from tests.support.child import wait_until
from tests.support.configured import POLL_SECONDS, REPOSITORY, configure_connector

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def _reader(stream: object, into: list[str]) -> threading.Thread:
    def read() -> None:
        for line in stream:  # type: ignore[attr-defined]
            into.append(line.rstrip("\n"))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_every_line_of_a_json_run_is_an_object_with_its_ids_and_no_secret(tmp_path: Path) -> None:
    with StandIn(world="demo") as standin:
        world = standin.world
        seen_config = tmp_path / "seen-mcp-config.json"  # the worker's copy: how the test learns the task token
        demo_worker = [
            "env", f"PYTHONPATH={REPOSITORY}", sys.executable, "-m", "shell.demo.worker",
            "--mcp-config", "{mcp_config}", "--base-url", standin.base_url,
            "--account", str(world.account_id), "--token-file", str(tmp_path / "token"),
        ]  # fmt: skip
        worker = ["sh", "-c", f'cp "$1" {shlex.quote(str(seen_config))} && shift && exec "$@"', "sh",
                  "{mcp_config}", *demo_worker]  # fmt: skip
        state = configure_connector(standin, tmp_path, worker=worker)
        process = subprocess.Popen(
            [str(REPOSITORY / "bin" / "connect"), "-v", "run", "--state-dir", str(state),
             "--poll-seconds", str(POLL_SECONDS), "--log-format", "json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        out: list[str] = []
        err: list[str] = []
        readers = [_reader(process.stdout, out), _reader(process.stderr, err)]
        try:
            wait_until(lambda: any('"message": "running account=' in line for line in out), timeout=60)
            process.send_signal(signal.SIGHUP)  # said on stderr, and ignored
            wait_until(lambda: any("SIGHUP ignored" in line for line in err), timeout=30)
            process.send_signal(signal.SIGUSR1)  # every thread's stack, as one object
            wait_until(lambda: any("the stacks of" in line for line in err), timeout=30)
            card = world.projects[0].recording_ids[0]
            event = standin.mention(world.people[0], card, "please look")
            wait_until(lambda: any("Done with event" in message["content"]
                                   for message in standin.messages("comment", card)), timeout=90)
            wait_until(lambda: any("state=sent" in line and '"kind": "worker_reply"' in line for line in err),
                       timeout=30)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=90)
            for reader in readers:
                reader.join(timeout=10)
    assert process.returncode == 0, "\n".join(err[-20:])
    said = {"stdout": [json.loads(line) for line in out], "stderr": [json.loads(line) for line in err]}
    for stream, objects in said.items():
        assert objects, f"{stream} said nothing"
        for shown in objects:
            assert list(shown)[:4] == list(HEAD), f"{stream}: {shown}"
    transitions = [shown for shown in said["stdout"] if shown["logger"] == "connector.transition"]
    heard = next(shown for shown in transitions if shown["message"].startswith("seen "))
    assert heard["event_id"] == event, heard  # the lane that heard it first, if any, as a field too
    assert heard["message"] == " ".join([f"seen event={event}", *([f"lane={heard['lane']}"] if "lane" in heard else [])])
    verdict = next(shown for shown in transitions if shown["message"].startswith("verdict "))
    assert (verdict["event_id"], verdict["state"]) == (event, "admitted"), verdict
    dispatched = next(shown for shown in transitions if shown["message"].startswith("dispatch "))
    assert event in dispatched["events"]
    assert isinstance(dispatched["task"], int)
    launching = next(shown for shown in said["stderr"] if "state=launching" in shown["message"])
    assert launching["task"] == dispatched["task"]
    assert launching["attempt"].startswith("att_")
    posted = next(shown for shown in said["stderr"] if shown.get("kind") == "worker_reply"
                  and shown.get("state") == "sent")
    assert isinstance(posted["intent"], int)
    assert posted["event_id"] == event
    assert said["stderr"][-1]["message"] == "stopped"
    dumped = next(shown for shown in said["stderr"] if shown["message"].startswith("the stacks of"))
    assert "Thread 0x" in dumped["detail"]
    config = json.loads(seen_config.read_text())
    task_token = next(iter(config["mcpServers"].values()))["env"][TASK_TOKEN_ENV]
    everything = "\n".join(out + err)
    for name, secret in (("the agent's token", world.token), ("the task's token", task_token),
                         ("the control secret", standin.control_secret)):
        assert secret not in everything, f"{name} is in a line"
