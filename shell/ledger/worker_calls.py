"""The worker's side of the ledger: the transactions behind its four tools, bound to one task token.

``DispatchLedger`` keeps its token's SHA-256, never the token. Every call is one immediate
transaction that first resolves the token to a live task: a token whose task ended or was retired is
refused from then on, and so is one whose live attempt recorded another process group than the
server's. Core (``core.dispatch_tools``) decides from the task's live rows; each write is a
compare-and-set on the state it was decided from (a moved row raises ``DispatchRowMoved`` and the
call rolls back), and the answer is built from the rows as the writes left them. A worker's words
are an intent written with the move they report, unless they hold a credential of the connector
(refused, and its attempt's ``words_refused`` says so); after the commit the call waits a few seconds,
reading only, for the message's id. The server's start imports only what ``check_token`` runs; the
rest is imported by the first tool call that uses it (``tests/dispatch_tools/test_mcp_process.py``)."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from returns.result import Failure, Result, Success

from core.dispatch_tools import RefusalKind, ToolRefusal, refuse
from core.intent_kinds import WORKER_KINDS, IntentKind
from core.json_input import json_or_none
from core.states import DeliveryState, EventOutcome, GuardState, RecordState
from core.task_token import token_sha256
from shell.ledger.connection import Ledger
from shell.log_format import ids

if TYPE_CHECKING:
    from core.dispatch_tools.decisions import (
        Acknowledge,
        AckRequest,
        Complete,
        CompleteRequest,
        GetRequest,
        NothingWaiting,
        ReplyRequest,
        Serve,
        Speak,
    )
    from core.dispatch_tools.instruction import DeliveryReceipt, DispatchRow, Instruction, Spoken
    from core.worker_words import WorkerMessage


log = logging.getLogger(__name__)

FOREIGN_GROUP = (
    "the task token belongs to another worker's session: this server is not in its attempt's process group"
)

_ROWS = """
SELECT te.event_id, te.delivery, te.guard, te.pulled_at IS NOT NULL, te.ack_id, te.outcome,
       te.reply_id, te.links,
       e.state, e.event_type, e.trigger_name, e.bucket_id, e.recording_id, e.recording_type,
       e.recording_url, e.reply_kind, e.reply_recording_id, e.requester_id, e.acknowledge,
       e.snapshot, e.reply_bucket_id
  FROM task_events te JOIN events e ON e.id = te.event_id
 WHERE te.task_id = ? AND te.retired_at IS NULL"""

Decided = TypeVar("Decided", bound="Acknowledge | Complete | Speak")  # core's word on a report: ``write`` or not
Answered = tuple["DeliveryReceipt", "Spoken | None"]  # a report's receipt, and the words it wrote

WORDS_WAIT = 5.0  # how long a call that gave words waits for the connector to post them
WORDS_POLL = 0.1

_SPOKEN = "SELECT intent_key, kind, body, state, receipt_id, message_kind FROM outbox"
_WORDS = (
    _SPOKEN + " WHERE event_id = ? AND task_id = ? AND kind IN ("
    + ", ".join(f"'{kind}'" for kind in sorted(WORKER_KINDS)) + ")"
)  # fmt: skip


class DispatchRowMoved(Exception):
    """A compare-and-set found a row no longer where the call decided from; it rolled back."""


@dataclass(frozen=True, slots=True)
class Dispatched:
    """``get_dispatch``'s answer: the instruction, or None when nothing waits."""

    instruction: Instruction | None


class DispatchLedger:
    """The ledger as one worker sees it: the live rows of its token's task, and no listing."""

    def __init__(
        self, ledger: Ledger, token: str, agent_id: int | None, process_group: int | None = None,
        words_wait: float = WORDS_WAIT,
    ) -> None:  # fmt: skip
        """``agent_id``: whose mentions are stripped (None: none). ``process_group``: the caller's
        own, checked against the live attempt's (None: not checked, in-process)."""
        if token.strip() == "":
            raise ValueError("a dispatch needs the task token")
        if agent_id is not None and agent_id <= 0:
            raise ValueError("an agent's Person id is positive")
        self._ledger = ledger
        self._token_sha256 = token_sha256(token)
        self._agent_id = agent_id
        self._process_group = process_group
        self._words_wait = words_wait

    def __repr__(self) -> str:  # never the token, nor its hash
        return f"DispatchLedger({self._ledger.path})"

    def check_token(self) -> Result[int, ToolRefusal]:
        with self._ledger.write() as connection:
            return self._task(connection)

    def get_dispatch(self, request: GetRequest) -> Result[Dispatched, ToolRefusal]:
        with self._ledger.write() as connection:
            return self._task(connection).bind(lambda task_id: self._get(connection, task_id, request))

    def ack_dispatch(self, request: AckRequest) -> Result[DeliveryReceipt, ToolRefusal]:
        from core.dispatch_tools.decisions import decide_ack  # noqa: PLC0415 -- at the first call

        return self._reported(
            "ack_dispatch", request.text,
            request.event_id, lambda task_id, row: decide_ack(row, request.ack_id, request.text, task_id),
            self._acknowledge, None if request.text is None else _spoken_of(IntentKind.worker_ack),
        )

    def complete_dispatch(self, request: CompleteRequest) -> Result[DeliveryReceipt, ToolRefusal]:
        from core.dispatch_tools.decisions import decide_complete  # noqa: PLC0415 -- at the first call

        return self._reported(
            "complete_dispatch", request.completion.reply,
            request.event_id, lambda task_id, row: decide_complete(row, request.completion, task_id),
            self._complete, None if request.completion.reply is None else _spoken_of(IntentKind.worker_reply),
        )

    def reply_dispatch(self, request: ReplyRequest) -> Result[DeliveryReceipt, ToolRefusal]:
        from core.dispatch_tools.decisions import decide_reply  # noqa: PLC0415 -- at the first call

        return self._reported("reply_dispatch", request.text,
                              request.event_id, lambda task_id, row: decide_reply(row, request.text, task_id),
                              self._speak, lambda row, decision: (_spoken_keyed(row, decision.words.key), ""))

    def _reported(  # noqa: PLR0917 -- the tool, its words, and how it decides, writes and answers
        self, tool: str, text: str | None, event_id: int,
        decide: Callable[[int, DispatchRow | None], Result[Decided, ToolRefusal]],
        write: Callable[[sqlite3.Connection, int, int, Decided], None],
        words: Callable[[DispatchRow, Decided], tuple[Spoken | None, str]] | None,
    ) -> Result[DeliveryReceipt, ToolRefusal]:
        """One report's transaction: its words refused if they hold a credential (the attempt says
        so), else decided on its row, written, answered from the row as the writes left it; then the
        wait for its words. The words are searched before the transaction, so the search never
        holds the ledger's write lock."""
        from core.dispatch_tools.instruction import receipt_of  # noqa: PLC0415 -- at the first call
        from core.worker_words import answer  # noqa: PLC0415 -- at the first call

        held = None if text is None else self._credential_in(text)

        def report(connection: sqlite3.Connection, task_id: int) -> Result[Answered, ToolRefusal]:
            if held is not None:
                from shell.ledger import worker_moves  # noqa: PLC0415 -- at the first call

                worker_moves.record_words_refused(connection, task_id, f"{tool}: its words held {held}, "
                                                  "so nothing was written")  # fmt: skip
                log.warning("%s task %d: words holding %s refused", tool, task_id, held, extra=ids(task=task_id))
                return Failure(refuse(RefusalKind.holds_credential))
            row = _row(connection, task_id, event_id)

            def apply(decision: Decided) -> Answered:
                found = row
                if decision.write:
                    write(connection, task_id, event_id, decision)
                    found = _row(connection, task_id, event_id)
                assert found is not None  # core refuses a missing row
                receipt = receipt_of(found)
                if words is None:
                    return receipt, None
                spoken, skipped = words(found, decision)
                return replace(receipt, words=answer(spoken, skipped=skipped)), spoken

            return decide(task_id, row).map(apply)

        with self._ledger.write() as connection:
            answered = self._task(connection).bind(lambda task_id: report(connection, task_id))
        return answered.map(self._awaited)

    def _credential_in(self, text: str) -> str | None:
        """The name of a credential of the connector's (``shell.ledger.fingerprints``) that ``text``
        or its rendering holds, in any form ``core.fingerprints`` knows."""
        from core.fingerprints import credential_in  # noqa: PLC0415 -- at the first call with words
        from core.worker_words import said  # noqa: PLC0415 -- at the first call with words
        from shell.ledger import fingerprints  # noqa: PLC0415 -- at the first call with words

        with self._ledger.read() as connection:
            known = fingerprints.known(connection)
        return credential_in(said(text), known)

    # -- inside the call's transaction ---------------------------------------------------------

    def _task(self, connection: sqlite3.Connection) -> Result[int, ToolRefusal]:
        found = connection.execute(
            "SELECT id FROM tasks WHERE token_sha256 = ? AND superseded_at IS NULL AND token_retired_at IS NULL",
            (self._token_sha256,),
        ).fetchone()
        if found is None:
            return Failure(refuse(RefusalKind.task_token_refused))
        if self._process_group is not None:
            sql = "SELECT pgid FROM attempts WHERE task_id = ? AND state <> 'ended' AND pgid IS NOT NULL"
            group = connection.execute(sql, (int(found[0]),)).fetchone()
            if group is not None and int(group[0]) != self._process_group:
                return Failure(refuse(RefusalKind.task_token_refused, FOREIGN_GROUP))
        return Success(int(found[0]))

    def _get(self, connection: sqlite3.Connection, task_id: int, request: GetRequest) -> Result[Dispatched, ToolRefusal]:
        from core.dispatch_tools.decisions import decide_get  # noqa: PLC0415 -- at the first call

        rows = _rows(connection, task_id)
        held = connection.execute("SELECT EXISTS (SELECT 1 FROM hold_marker)").fetchone()[0] == 1
        return decide_get(rows, request.event_id, held=held).map(
            lambda decision: self._hand_out(connection, task_id, decision)
        )

    def _hand_out(self, connection: sqlite3.Connection, task_id: int, decision: NothingWaiting | Serve) -> Dispatched:
        from core.dispatch_tools.decisions import NothingWaiting, Serve  # noqa: PLC0415 -- at the first call
        from core.dispatch_tools.instruction import build_instruction  # noqa: PLC0415 -- at the first call

        match decision:
            case NothingWaiting():
                return Dispatched(None)
            case Serve():
                self._serve(connection, task_id, decision)
        row = _row(connection, task_id, decision.event_id)
        instruction = None if row is None else build_instruction(row, self._agent_id)
        if instruction is None:  # the row or its snapshot vanished under the writes
            raise DispatchRowMoved(f"task {task_id} event {decision.event_id}: nothing to hand out")
        return Dispatched(instruction)

    def _awaited(self, answered: Answered) -> DeliveryReceipt:
        """After the commit, the words' intent read until it settles, for ``words_wait``."""
        from core.worker_words import answer, settled  # noqa: PLC0415 -- at the first call

        receipt, spoken = answered
        if spoken is None or settled(spoken):
            return receipt
        clock = self._ledger.clock
        deadline = clock.monotonic() + self._words_wait
        while clock.monotonic() < deadline:
            clock.sleep(WORDS_POLL)
            with self._ledger.read() as connection:
                found = _spoken_by_key(connection, spoken.key)
            if found is not None and settled(found):
                return _landed(replace(receipt, words=answer(found)), found)
        return receipt

    def _serve(self, connection: sqlite3.Connection, task_id: int, serve: Serve) -> None:
        from shell.ledger import worker_moves  # noqa: PLC0415 -- at the first call

        now = self._ledger.timestamp()
        key = (task_id, serve.event_id)
        if serve.expose:
            _compare_and_set(worker_moves.expose(connection, now, *key), "expose", key)
        if serve.pull:
            _compare_and_set(worker_moves.pull(connection, now, *key), "record the pull of", key)
        if serve.cancel_guard:
            _compare_and_set(worker_moves.cancel_guard(connection, *key), "cancel the guard of", key)
        log.info("get_dispatch task %d event %d: exposed %s, first pull %s, guard canceled %s",
                 task_id, serve.event_id, serve.expose, serve.pull, serve.cancel_guard,
                 extra=ids(task=task_id, event_id=serve.event_id))

    def _acknowledge(self, connection: sqlite3.Connection, task_id: int, event_id: int, decision: Acknowledge) -> None:
        from shell.ledger import worker_moves  # noqa: PLC0415 -- at the first call

        moved = worker_moves.acknowledge(connection, self._ledger.timestamp(), decision.ack_id, task_id, event_id)
        _compare_and_set(moved, "acknowledge", (task_id, event_id))
        ack = "recorded" if decision.ack_id is not None else "none"
        log.info("ack_dispatch task %d event %d: exposed -> delivered, ack id %s", task_id, event_id, ack,
                 extra=ids(task=task_id, event_id=event_id))
        self._words_and_progress(connection, task_id, event_id, decision.words)

    def _speak(self, connection: sqlite3.Connection, task_id: int, event_id: int, decision: Speak) -> None:
        self._words_and_progress(connection, task_id, event_id, decision.words)
        log.info("reply_dispatch task %d event %d: a note written for the connector to post", task_id, event_id,
                 extra=ids(task=task_id, event_id=event_id))

    def _complete(self, connection: sqlite3.Connection, task_id: int, event_id: int, decision: Complete) -> None:
        from shell.ledger import worker_moves  # noqa: PLC0415 -- at the first call

        now = self._ledger.timestamp()
        report = decision.report
        moved = worker_moves.complete(connection, task_id, event_id, now=now, outcome=str(report.outcome),
                                      links=json.dumps(list(report.links)), reply_id=report.reply_id)
        _compare_and_set(moved, "complete", (task_id, event_id))
        if decision.complete_record:
            moved = worker_moves.complete_record(connection, event_id, now)
            _compare_and_set(moved, "complete the record of", (task_id, event_id))
        self._words_and_progress(connection, task_id, event_id, decision.words)
        log.info("complete_dispatch task %d event %d: delivery completed (%s), record completed %s",
                 task_id, event_id, report.outcome, decision.complete_record,
                 extra=ids(task=task_id, event_id=event_id))

    def _words_and_progress(self, connection: sqlite3.Connection, task_id: int, event_id: int,
                            words: WorkerMessage | None) -> None:
        """The worker's words, if it gave some, as an intent; its report as its attempt's progress."""
        from shell.ledger import worker_moves  # noqa: PLC0415 -- at the first call

        if words is not None:
            worker_moves.write_words(connection, words, task_id, event_id, self._ledger.clock.now())
        worker_moves.record_progress(connection, task_id, self._ledger.clock.now())


def _compare_and_set(changed: int, what: str, key: tuple[int, int]) -> None:
    """A worker's move wrote its one row, or the row moved under it and the call rolls back."""
    if changed != 1:
        task_id, event_id = key
        raise DispatchRowMoved(f"could not {what} task {task_id} event {event_id}: the row moved")


def _rows(connection: sqlite3.Connection, task_id: int) -> tuple[DispatchRow, ...]:
    return tuple(_dispatch_row(row) for row in connection.execute(_ROWS + " ORDER BY te.event_id", (task_id,)).fetchall())


def _row(connection: sqlite3.Connection, task_id: int, event_id: int) -> DispatchRow | None:
    found = connection.execute(_ROWS + " AND te.event_id = ?", (task_id, event_id)).fetchone()
    if found is None:
        return None
    words = tuple(_spoken(values) for values in connection.execute(_WORDS + " ORDER BY id", (event_id, task_id)))
    return replace(_dispatch_row(found), words=words)


def _spoken(values: tuple[Any, ...]) -> Spoken:
    from core.dispatch_tools.instruction import Spoken  # noqa: PLC0415 -- at the first call

    key, kind, *rest = values
    return Spoken(key, IntentKind(kind), *rest)


def _spoken_by_key(connection: sqlite3.Connection, key: str) -> Spoken | None:
    found = connection.execute(_SPOKEN + " WHERE intent_key = ?", (key,)).fetchone()
    return None if found is None else _spoken(found)


def _spoken_of(kind: IntentKind) -> Callable[[DispatchRow, Any], tuple[Spoken | None, str]]:
    """The row's message of ``kind``, or why the words given were not written."""
    return lambda row, decision: (row.spoken(kind), str(getattr(decision, "skipped", "")))


def _spoken_keyed(row: DispatchRow, key: str) -> Spoken | None:
    return next((found for found in row.words if found.key == key), None)


def _landed(receipt: DeliveryReceipt, spoken: Spoken) -> DeliveryReceipt:
    """The receipt with a landed message's id where the row records it."""
    if spoken.receipt_id is not None and spoken.kind is IntentKind.worker_ack:
        return replace(receipt, ack_id=spoken.receipt_id)
    if spoken.receipt_id is not None and spoken.kind is IntentKind.worker_reply:
        return replace(receipt, reply_id=spoken.receipt_id)
    return receipt


def _dispatch_row(row: tuple[Any, ...]) -> DispatchRow:
    from core.dispatch_tools.instruction import DispatchRow, InstructionRecord  # noqa: PLC0415 -- at the first call

    (
        event_id, delivery, guard, pulled, ack_id, outcome, reply_id, links, state, event_type, trigger, bucket_id,
        recording_id, recording_type, recording_url, reply_kind, reply_recording_id, requester_id, acknowledge,
        snapshot, reply_bucket_id,
    ) = row
    record = InstructionRecord(  # every table is STRICT: a value read is of its column's type
        event_id, RecordState(state), event_type, trigger, bucket_id, recording_id, recording_type, recording_url,
        reply_kind, reply_recording_id, requester_id, bool(acknowledge), snapshot, reply_bucket_id,
    )
    return DispatchRow(record, DeliveryState(delivery), GuardState(guard), bool(pulled), ack_id,
                       EventOutcome(outcome), reply_id, _links(links))


def _links(text: object) -> tuple[str, ...]:
    value = json_or_none(str(text)) if text is not None else []
    if not isinstance(value, list):
        return ()
    return tuple(str(link) for link in value)
