"""A worker's words holding a credential of the connector, against a real ledger file and a real
``bin/connect mcp``: refused with a tool error that says why, nothing written but the attempt's
note of it; the fingerprints the connector writes of its own credentials and of each task's token."""

from __future__ import annotations

import base64
import secrets
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest
from returns.result import Failure

from core.dispatch_tools import MESSAGES, RefusalKind
from core.dispatch_tools.decisions import AckRequest, CompleteRequest, Completion, GetRequest, ReplyRequest
from core.fingerprints import ACCESS_TOKEN, CLIENT_SECRET, REFRESH_TOKEN, TASK_TOKEN, credential_in
from shell.clock import FakeClock
from shell.ledger import fingerprints
from shell.ledger.connection import open_ledger
from shell.ledger.worker_calls import DispatchLedger
from tests.dispatch_tools.test_mcp_process import environment, start
from tests.dispatch_tools.world import AGENT, DispatchWorld, Task
from tests.support.ledger_world import LedgerWorld

ENCODED: dict[str, Callable[[str], str]] = {
    "as is": str,
    "base64": lambda secret: base64.b64encode(f"token={secret}".encode()).decode(),
    "url-encoded": lambda secret: "".join(f"%{byte:02X}" for byte in secret.encode()),
    "hex": lambda secret: secret.encode().hex().upper(),
    "split by controls": "\x00".join,
}
ACCESS = "BAhbB0kiAbB7ImNsaWVudF9+aWQiOiI/YWJjIn0GOgZFVEkiDGVuY3J5cHRlZAY7AEY=--8f2c0a9b41d7e3f5a6c8"


def pulled(world: DispatchWorld, event_id: int = 1) -> tuple[Task, DispatchLedger]:
    world.request(event_id)
    task = world.task(event_id)
    world.launch(task)
    tools = world.tools(task)
    assert tools.get_dispatch(GetRequest(event_id)).unwrap().instruction is not None
    return task, tools


def words_written(world: DispatchWorld) -> int:
    with world.ledger.read() as connection:
        return int(connection.execute("SELECT COUNT(*) FROM outbox WHERE kind LIKE 'worker_%'").fetchone()[0])


def words_refused(world: DispatchWorld, task: Task) -> str:
    with world.ledger.read() as connection:
        return str(connection.execute("SELECT words_refused FROM attempts WHERE task_id = ?", (task.id,)).fetchone()[0])


def calls(text: str) -> dict[str, Callable[[DispatchLedger], object]]:
    return {
        "ack_dispatch": lambda tools: tools.ack_dispatch(AckRequest(1, None, f"On it: {text}")),
        "reply_dispatch": lambda tools: tools.reply_dispatch(ReplyRequest(1, f"Found it:\n\n> {text}\n")),
        "complete_dispatch": lambda tools: tools.complete_dispatch(
            CompleteRequest(1, Completion("succeeded", reply=f"Done. The key is **{text}**."))),
    }  # fmt: skip


@pytest.mark.parametrize("encoding", list(ENCODED), ids=list(ENCODED))
@pytest.mark.parametrize("tool", ["ack_dispatch", "reply_dispatch", "complete_dispatch"])
def test_words_holding_the_task_token_are_refused_and_only_the_attempt_says_so(
    world: DispatchWorld, tool: str, encoding: str
) -> None:
    task, tools = pulled(world)
    before = world.row(task, 1)
    answer = calls(ENCODED[encoding](task.token))[tool](tools)
    assert isinstance(answer, Failure)
    assert answer.failure().kind == RefusalKind.holds_credential
    assert "the text held a credential of the connector" in answer.failure().message
    assert words_written(world) == 0
    assert world.row(task, 1) == before
    assert words_refused(world, task) == f"{tool}: its words held {TASK_TOKEN}, so nothing was written"
    assert task.token not in words_refused(world, task)


def test_the_connectors_own_credentials_are_refused_by_name_and_the_same_words_without_them_pass(
    world: DispatchWorld,
) -> None:
    refresh, client_secret = secrets.token_urlsafe(32), secrets.token_hex(32)
    with world.ledger.write() as connection:
        held = ((ACCESS_TOKEN, ACCESS), (REFRESH_TOKEN, refresh), (CLIENT_SECRET, client_secret))
        assert fingerprints.record_credentials(connection, held, world.ledger.clock.now()) == 3
    task, tools = pulled(world)
    for secret, name in ((ACCESS, ACCESS_TOKEN), (refresh, REFRESH_TOKEN), (client_secret, CLIENT_SECRET)):
        refused = tools.reply_dispatch(ReplyRequest(1, f"see {quote(secret, safe='')}"))
        assert refused.failure().kind == RefusalKind.holds_credential
        assert words_refused(world, task) == f"reply_dispatch: its words held {name}, so nothing was written"
    assert words_written(world) == 0
    assert tools.reply_dispatch(ReplyRequest(1, "see the token file")).unwrap().words is not None
    assert words_written(world) == 1


def test_another_live_tasks_token_is_refused_and_a_superseded_ones_fingerprints_are_gone(
    world: DispatchWorld,
) -> None:
    _, tools = pulled(world, 1)
    world.request(2)
    other = world.task(2)
    assert tools.reply_dispatch(ReplyRequest(1, other.token)).failure().kind == RefusalKind.holds_credential
    world.supersede(other)
    with world.ledger.read() as connection:
        left = connection.execute("SELECT COUNT(*) FROM credential_fingerprints WHERE task_id = ?", (other.id,))
        assert left.fetchone()[0] == 0
    assert tools.reply_dispatch(ReplyRequest(1, other.token)).unwrap().words is not None


def test_the_connector_keeps_its_credentials_fingerprints_and_the_generation_before_only(
    world: DispatchWorld,
) -> None:
    first, second, third = (secrets.token_urlsafe(40) for _ in range(3))
    clock = world.ledger.clock
    assert isinstance(clock, FakeClock)
    for token, written in ((first, 1), (first, 0), (second, 1), (third, 1)):
        clock.advance(60)
        with world.ledger.write() as connection:
            assert fingerprints.record_credentials(connection, ((ACCESS_TOKEN, token),),
                                                   world.ledger.clock.now()) == written  # fmt: skip
    with world.ledger.read() as connection:
        known = fingerprints.known(connection)
        stored = connection.execute("SELECT group_concat(sha256 || credential) FROM credential_fingerprints")
        assert not {first, second, third} & set(str(stored.fetchone()[0]).split(","))
    assert [credential_in([token], known) for token in (first, second, third)] == [None, ACCESS_TOKEN, ACCESS_TOKEN]


def test_a_launch_writes_its_tokens_fingerprints_with_the_task(tmp_path: Path) -> None:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o700)
    with open_ledger(directory / "ledger.db", clock=FakeClock()) as ledger:
        world = LedgerWorld(ledger)
        world.request(7)
        token = world.launch(7).token
        with ledger.read() as connection:
            known = fingerprints.known(connection)
    assert credential_in([base64.b64encode(token.encode()).decode()], known) == TASK_TOKEN


@pytest.mark.slow
def test_the_mcp_server_answers_a_tool_error_for_words_holding_its_own_token(
    world: DispatchWorld, ledger_path: Path
) -> None:
    world.request(1)
    task = world.task(1)
    world.launch(task)
    server = start(["--ledger", str(ledger_path), "--agent-id", str(AGENT)], environment(BASECAMP_CONNECT_TASK_TOKEN=task.token))
    try:
        server.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}})
        assert not server.call("get_dispatch")[0]
        refused, said = server.call("reply_dispatch", event_id=1, text=f"my token: {task.token.encode().hex()}")
        assert refused
        assert said == {"error": "holds_credential", "message": MESSAGES[RefusalKind.holds_credential]}
        assert task.token not in str(said)
    finally:
        code, errors = server.close()
    assert code == 0, errors
    assert task.token.encode() not in errors
    assert words_written(world) == 0
    assert words_refused(world, task) == f"reply_dispatch: its words held {TASK_TOKEN}, so nothing was written"
