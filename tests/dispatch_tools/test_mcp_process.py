"""``bin/connect mcp`` as the worker's MCP client starts it: a real process on real stdio, its
token handed over in the environment or on a pipe and taken away at once."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shell.cli.mcp import NOT_ERASED, TOKEN_ENV, take_token
from shell.errors import EXIT_CONFIG, EXIT_REFUSED, UserError
from tests.dispatch_tools.world import AGENT, DispatchWorld, Task

CONNECT = Path(__file__).resolve().parents[2] / "bin" / "connect"
TIMEOUT = 30.0


def environment(**extra: str) -> dict[str, str]:
    base = {name: value for name, value in os.environ.items() if name != TOKEN_ENV}
    return {**base, **extra}


class Server:
    """One ``bin/connect mcp`` process and the client's side of its stdio."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.ids = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self) -> Any:
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if not selector.select(TIMEOUT):
                pytest.fail(f"bin/connect mcp answered nothing in {TIMEOUT} s")
        line = self.process.stdout.readline()
        assert line.endswith(b"\n"), line
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.ids += 1
        self.send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params or {}})
        reply = self.receive()
        assert reply["id"] == self.ids
        return reply

    def call(self, name: str, **arguments: Any) -> Any:
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        return result["isError"], json.loads(result["content"][0]["text"])

    def close(self) -> tuple[int, bytes]:
        """Close stdin (the MCP stdio way to stop a server); its exit code and stderr."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.stdin = None  # communicate() would flush it
        rest, errors = self.process.communicate(timeout=TIMEOUT)
        assert rest == b"", "nothing but answers on stdout"
        return self.process.returncode, errors


def start(argv: list[str], env: dict[str, str], *, entry: bool = False, **popen: Any) -> Server:
    """``bin/connect mcp``, or with ``entry`` the lean entry a worker's MCP configuration names."""
    launcher = [sys.executable, "-P", "-m", "shell.worker.mcp_entry"] if entry else [str(CONNECT), "mcp"]
    if entry:
        env = {**env, "PYTHONPATH": str(CONNECT.parents[1])}
    process = subprocess.Popen(
        [*launcher, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        **popen,
    )
    return Server(process)


@pytest.fixture
def task(world: DispatchWorld) -> Task:
    world.request(1)
    return world.task(1)


@pytest.mark.slow
def test_a_worker_pulls_acknowledges_and_completes_over_real_stdio(
    world: DispatchWorld, task: Task, ledger_path: Path
) -> None:
    server = start(["--ledger", str(ledger_path), "--agent-id", str(AGENT)], environment(**{TOKEN_ENV: task.token}))
    try:
        initialized = server.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
        )
        assert initialized["result"]["protocolVersion"] == "2025-06-18"
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        names = [tool["name"] for tool in server.request("tools/list")["result"]["tools"]]
        assert names == ["get_dispatch", "ack_dispatch", "complete_dispatch", "reply_dispatch"]

        failed, got = server.call("get_dispatch")
        assert not failed
        assert got["instruction"]["event_id"] == 1
        assert "<bc-attachment" not in got["instruction"]["content"], "the agent's own mention is stripped"
        assert world.guard_intent(1) == ("canceled", "get_dispatch")
        assert server.call("ack_dispatch", event_id=1, ack_id=501) == (
            False, {"event_id": 1, "delivery": "delivered", "ack_id": 501},
        )
        assert server.call("complete_dispatch", event_id=1, outcome="succeeded", reply_id=502)[1]["delivery"] == "completed"
        assert world.record_state(1) == "completed"
        server.send({"jsonrpc": "2.0", "id": 99, "method": "no/such/method"})
        assert server.receive()["error"]["code"] == -32601
    finally:
        code, errors = server.close()
    assert code == 0
    assert task.token.encode() not in errors


@pytest.mark.slow
def test_the_token_can_arrive_on_an_inherited_pipe(world: DispatchWorld, task: Task, ledger_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, task.token.encode() + b"\n")
    os.close(write_end)
    try:
        server = start(
            ["--ledger", str(ledger_path), "--token-fd", str(read_end)], environment(), pass_fds=(read_end,)
        )
    finally:
        os.close(read_end)
    try:
        failed, got = server.call("get_dispatch", event_id=1)
        assert not failed
        assert got["instruction"]["delivery"] == "exposed"
    finally:
        code, _ = server.close()
    assert code == 0


SERVER_NEVER_IMPORTS = {
    "core.admission", "core.feed", "core.configuration", "core.settlement",
    "core.hold", "core.message_kinds", "core.presentation.status_values",
    "core.snapshots", "core.edges",
    "shell.ledger.records", "shell.ledger.tasks", "shell.ledger.deliveries", "shell.ledger.outbox",
}  # fmt: skip
"""What a worker's server never runs: admission and the feed, the dispatcher and its settlement,
the outbox, the snapshots core reads beside an intent, the lifecycle tables (its tools read the
state vocabularies, ``core.states``), the configuration's parser and status's presentation. Each
is a module whose import a worker would wait on (the server answers ``initialize`` within a few
times a bare interpreter's start). ``core.destinations`` (an enum and a dataclass) is
imported: a worker's words name where they go."""


SERVER_PROBE = (
    "import atexit, json, os, runpy, sys\n"
    "atexit.register(lambda: os.write(2, ('modules ' + json.dumps(sorted(sys.modules)) + '\\n').encode()))\n"
    "runpy.run_module('shell.worker.mcp_entry', run_name='__main__', alter_sys=True)\n"
)
"""The lean entry run as ``-m`` runs it, saying on stderr, as it exits, every module it imported."""


@pytest.mark.slow
def test_the_server_imports_only_what_its_tools_use(world: DispatchWorld, task: Task, ledger_path: Path) -> None:
    """The lean entry as the connector launches it, one interpreter (the token on a pipe), through
    all three tools: the modules it holds as it exits are every one its life imported, a late
    import inside a tool among them."""
    read_end, write_end = os.pipe()
    os.write(write_end, task.token.encode())
    os.close(write_end)
    try:
        server = Server(
            subprocess.Popen(
                [sys.executable, "-P", "-c", SERVER_PROBE, "--ledger", str(ledger_path), "--agent-id", str(AGENT),
                 "--token-fd", str(read_end)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(read_end,),
                env=environment(PYTHONPATH=str(CONNECT.parents[1])),
            )
        )  # fmt: skip
    finally:
        os.close(read_end)
    try:
        server.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}})
        assert not server.call("get_dispatch")[0]
        assert not server.call("ack_dispatch", event_id=1, ack_id=501)[0]
        assert not server.call("complete_dispatch", event_id=1, outcome="succeeded", reply_id=502)[0]
    finally:
        code, errors = server.close()
    assert code == 0, errors
    assert world.record_state(1) == "completed"
    (said,) = [line for line in errors.decode().splitlines() if line.startswith("modules ")]
    imported = set(json.loads(said.removeprefix("modules ")))
    assert {"shell.cli.mcp", "shell.ledger.worker_calls", "shell.ledger.worker_moves"} <= imported
    assert not SERVER_NEVER_IMPORTS & imported


START_NEVER_IMPORTS = {
    "core.mentions", "html", "core.oauth", "shutil", "core.edges", "core.configuration",
    "core.presentation.status_values", "shell.doctor.handshake",
}  # fmt: skip
"""What the server's start, to its ``initialize`` answer, never imports: an instruction's mention
stripping (the first ``get_dispatch`` imports it), a token file's reader (only a file that is not
a ledger is read as one), argparse's terminal width through ``shutil`` (``shell.cli.seam``),
the lifecycle tables, the configuration's parser, status's values, and the probe's tools (only a
probe token's start serves them)."""

FIRST_CALL_IMPORTS = {
    "core.dispatch_tools.decisions", "core.dispatch_tools.instruction", "core.worker_words", "core.destinations",
    "shell.ledger.worker_moves",
}  # fmt: skip
"""What neither the start nor ``tools/list`` imports, the first tool call does: core's decisions,
the instruction and the receipt, the tools' arguments, the rows' classes, the worker's words and
where they go, and the worker's moves: each is imported by the call that reads it. The schemas ``tools/list`` answers read their bounds from ``core.dispatch_tools``."""

TOOLS_LIST = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode() + b"\n"


@pytest.mark.slow
def test_the_servers_start_to_its_initialize_answer_imports_none_of_what_it_needs_later(
    task: Task, ledger_path: Path
) -> None:
    """As the connector launches it, the token in its environment: ``-X importtime`` names every
    module its life imported, and this life is ``initialize`` and the end of stdin."""
    imported = _imported_by(task, ledger_path, INITIALIZE)
    assert {"shell.cli.mcp", "shell.ledger.worker_calls", "shell.worker.mcp"} <= imported
    assert not START_NEVER_IMPORTS & imported
    assert not FIRST_CALL_IMPORTS & imported


@pytest.mark.slow
def test_the_tools_list_imports_none_of_what_the_first_tool_call_needs(task: Task, ledger_path: Path) -> None:
    """``initialize`` then ``tools/list``, as a client starts: the schemas are answered whole and
    nothing only a tool call runs was imported; a ``get_dispatch`` then imports it."""
    listed = _imported_by(task, ledger_path, INITIALIZE + TOOLS_LIST)
    assert not FIRST_CALL_IMPORTS & listed
    called = _imported_by(task, ledger_path, INITIALIZE + TOOLS_LIST + GET_DISPATCH)
    assert called >= FIRST_CALL_IMPORTS


GET_DISPATCH = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "get_dispatch", "arguments": {}},
        }
    ).encode()
    + b"\n"
)


def _imported_by(task: Task, ledger_path: Path, lines: bytes) -> set[str]:
    """Every module the lean entry imported, launched as the connector launches it (the token in
    its environment), over a life of ``lines`` then the end of stdin; each request answered."""
    started = subprocess.run(
        [sys.executable, "-X", "importtime", "-P", "-m", "shell.worker.mcp_entry", "--ledger", str(ledger_path),
         "--agent-id", str(AGENT)],
        input=lines, capture_output=True, timeout=TIMEOUT, check=False,
        env=environment(PYTHONPATH=str(CONNECT.parents[1]), **{TOKEN_ENV: task.token}),
    )  # fmt: skip
    assert started.returncode == 0, started.stderr[-2000:]
    answers = [json.loads(line) for line in started.stdout.splitlines()]
    assert len(answers) == lines.count(b"\n"), answers
    assert all("result" in answer for answer in answers), answers
    if b"tools/list" in lines:
        assert [tool["name"] for tool in answers[1]["result"]["tools"]] == [
            "get_dispatch", "ack_dispatch", "complete_dispatch", "reply_dispatch",
        ]  # fmt: skip
    errors = started.stderr.decode().splitlines()
    return {line.rsplit("|", 1)[-1].strip() for line in errors if line.startswith("import time:")}


def run_to_exit(argv: list[str], env: dict[str, str], **popen: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(CONNECT), "mcp", *argv], input=b"", capture_output=True, env=env, timeout=TIMEOUT, check=False, **popen
    )


def one_line(errors: bytes) -> str:
    lines = errors.decode().strip().splitlines()
    assert len(lines) == 1, errors
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.mark.slow
def test_a_missing_or_foreign_ledger_is_one_line_and_a_non_zero_exit(tmp_path: Path, task: Task) -> None:
    directory = tmp_path / "private"
    directory.mkdir(mode=0o700)
    missing = run_to_exit(["--ledger", str(directory / "connector.db")], environment(**{TOKEN_ENV: task.token}))
    assert missing.returncode == EXIT_CONFIG
    assert "no ledger here" in one_line(missing.stderr)
    assert missing.stdout == b""
    assert not (directory / "connector.db").exists(), "never created"

    foreign = directory / "foreign.db"
    foreign.write_bytes(b"this is not a ledger" * 100)
    os.chmod(foreign, 0o600)
    refused = run_to_exit(["--ledger", str(foreign)], environment(**{TOKEN_ENV: task.token}))
    assert refused.returncode == EXIT_CONFIG
    one_line(refused.stderr)
    assert refused.stdout == b""
    assert task.token.encode() not in missing.stderr + refused.stderr


@pytest.mark.slow
def test_a_token_that_names_no_live_task_ends_the_server_before_it_speaks(
    world: DispatchWorld, task: Task, ledger_path: Path
) -> None:
    world.supersede(task)
    refused = run_to_exit(["--ledger", str(ledger_path)], environment(**{TOKEN_ENV: task.token}))
    assert refused.returncode == EXIT_REFUSED
    assert one_line(refused.stderr) == "error: the task token names no current task"
    assert refused.stdout == b""
    missing = run_to_exit(["--ledger", str(ledger_path)], environment())
    assert missing.returncode == EXIT_CONFIG
    assert one_line(missing.stderr) == f"error: no task token: ${TOKEN_ENV} is not set"


def test_the_token_is_taken_out_of_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, " a-token \n")
    assert take_token(TOKEN_ENV, None) == "a-token"
    assert TOKEN_ENV not in os.environ
    monkeypatch.setenv("MY_TOKEN", "b-token")
    monkeypatch.setenv(TOKEN_ENV, "stray")
    assert take_token("MY_TOKEN", None) == "b-token"
    assert "MY_TOKEN" not in os.environ
    assert TOKEN_ENV not in os.environ
    monkeypatch.setenv("EMPTY_TOKEN", "  ")
    with pytest.raises(UserError, match="empty"):
        take_token("EMPTY_TOKEN", None)
    assert "EMPTY_TOKEN" not in os.environ


def test_a_token_on_a_descriptor_is_read_closed_and_has_one_way_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, b"c-token")
    os.close(write_end)
    assert take_token(None, read_end) == "c-token"
    with pytest.raises(OSError):  # noqa: PT011 - closed is all that matters
        os.fstat(read_end)

    read_end, write_end = os.pipe()
    os.close(write_end)
    monkeypatch.setenv(TOKEN_ENV, "left-behind")
    with pytest.raises(UserError, match="one way in"):
        take_token(None, read_end)
    assert TOKEN_ENV not in os.environ
    os.close(read_end)

    with pytest.raises(UserError, match="standard I/O"):
        take_token(None, 0)
    regular = os.open(tmp_path / "token", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        with pytest.raises(UserError, match="not a pipe or a socket"):
            take_token(None, regular)
        os.fstat(regular)  # refused and left alone: still open
    finally:
        os.close(regular)


def test_the_token_is_never_an_argument() -> None:
    from shell.cli.main import build_parser

    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["mcp", "--ledger", "x", "--token", "secret"])
    options = {option for action in parser._subparsers._group_actions for name, choice in action.choices.items()  # type: ignore[union-attr]
               if name == "mcp" for sub in choice._actions for option in sub.option_strings}
    # --token-env names a variable and --token-fd a descriptor: neither carries the token itself.
    # (setup's --token-file names a file; the token stays in it.)
    assert not [option for option in options if option.startswith("--token") and option not in ("--token-env", "--token-fd")]


def initialized_without_the_token(server: Server, token: str) -> list[bytes]:
    """The server answers initialize, and neither the token nor its variable's name is in
    /proc/PID/environ; its command line."""
    initialized = server.request(
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
    )
    assert initialized["result"]["protocolVersion"] == "2025-06-18"
    started_with = Path(f"/proc/{server.process.pid}/environ").read_bytes()
    assert token.encode() not in started_with
    assert TOKEN_ENV.encode() not in started_with
    return Path(f"/proc/{server.process.pid}/cmdline").read_bytes().split(b"\0")


@pytest.mark.slow
@pytest.mark.parametrize("entry", [False, True], ids=["bin/connect mcp", "mcp_entry"])
def test_a_token_given_in_the_environment_is_not_in_the_servers_environment_while_it_serves(
    world: DispatchWorld, task: Task, ledger_path: Path, entry: bool
) -> None:
    server = start(
        ["--ledger", str(ledger_path), "--agent-id", str(AGENT)], environment(**{TOKEN_ENV: task.token}), entry=entry
    )
    try:
        command_line = initialized_without_the_token(server, task.token)
        assert b"--token-fd" not in command_line, "erased where it stood: the process was not started again"
        assert server.call("get_dispatch")[1]["instruction"]["event_id"] == 1, "it still serves its task"
    finally:
        code, _ = server.close()
    assert code == 0


UNWRITABLE_BLOCK = (
    "import runpy, sys\n"
    "from shell import process_secrets\n"
    "process_secrets.erase_environment = lambda names, secret: False  # a kernel that will not let it be written\n"
    "if sys.argv.pop(1) == 'entry':\n"
    "    runpy.run_module('shell.worker.mcp_entry', run_name='__main__', alter_sys=True)\n"
    "from shell.cli.main import main\n"
    "sys.exit(main(['mcp', *sys.argv[1:]]))\n"
)
INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
}).encode() + b"\n"  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("entry", [False, True], ids=["bin/connect mcp", "mcp_entry"])
def test_where_the_environment_block_cannot_be_erased_the_server_refuses_to_start_with_exit_3(
    world: DispatchWorld, task: Task, ledger_path: Path, entry: bool
) -> None:
    """A live task's token, a kernel that will not let the block be written: one line saying why
    and what to do, exit 3, no protocol message, the task's instruction as it was."""
    argv = ["entry" if entry else "connect", "--ledger", str(ledger_path), "--agent-id", str(AGENT)]
    env = {**environment(**{TOKEN_ENV: task.token}), "PYTHONPATH": str(CONNECT.parents[1])}
    before = world.row(task, 1)
    refused = subprocess.run(
        [sys.executable, "-P", "-c", UNWRITABLE_BLOCK, *argv],
        input=INITIALIZE, capture_output=True, env=env, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert refused.returncode == EXIT_CONFIG
    assert refused.stderr.decode() == f"error: {NOT_ERASED}\n"
    assert refused.stdout == b"", "no answer to initialize: it never served"
    assert task.token.encode() not in refused.stderr
    assert world.row(task, 1) == before, "its instruction untouched: no call reached the ledger"


def _running_in_group(world: DispatchWorld, task: Task, pgid: int) -> None:
    with world.ledger.write() as connection:
        connection.execute(
            "INSERT INTO attempts (id, task_id, seq, state, pid, pgid, process_started, launched_at)"
            " VALUES ('att_00000000000000000000abcd', ?, 1, 'running', ?, ?, '77', ?)",
            (task.id, pgid, pgid, world.now()),
        )


@pytest.mark.slow
def test_a_token_read_from_another_attempts_session_is_refused_outside_its_process_group(
    world: DispatchWorld, task: Task, ledger_path: Path
) -> None:
    _running_in_group(world, task, os.getpgrp() + 1)  # the sibling's worker: not this server's group
    refused = run_to_exit(["--ledger", str(ledger_path)], environment(**{TOKEN_ENV: task.token}))
    assert refused.returncode == EXIT_REFUSED
    assert "not in its attempt's process group" in one_line(refused.stderr)


@pytest.mark.slow
def test_a_server_in_its_attempts_process_group_serves(world: DispatchWorld, task: Task, ledger_path: Path) -> None:
    _running_in_group(world, task, os.getpgrp())  # a server the worker started is in the worker's group
    server = start(["--ledger", str(ledger_path)], environment(**{TOKEN_ENV: task.token}))
    try:
        server.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "test", "version": "0"}})
        assert server.call("get_dispatch")[1]["instruction"]["event_id"] == 1
    finally:
        code, _ = server.close()
    assert code == 0
