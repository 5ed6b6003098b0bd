"""The sender: claim, exactly one request, then a receipt -- or, after doubt, a listing.

The only path to a request is a claim: ``pending -> sending``, committed by compare-and-set before
the request is made, after the kind's claim rule (``core.message_kinds``) has decided from a
snapshot read in the claim's transaction that the message is still called for (or must wait: it
stays pending, untouched, and counts toward no flush's limit). A claimed intent gets exactly one
request; what comes of it, and of doubt, is ``core.posting``'s to say, and what a listing may
adopt ``core.adoption``'s. Nothing sending is ever posted again. A worker's words go the same way;
when one lands, its id is recorded on its task row, in the same transaction, as the event's
``ack_id`` or ``reply_id``; a reply refused or given up has its ended attempt's completion notice
read again there too (``shell.ledger.tasks``).

Sending and reconciling hold one lock, so an intent this process is sending is never reconciled
under it, and one flush never claims the same intent twice. The hold pauses sending, never
reconciliation. After a request that could not connect, or whose token Basecamp refused, nothing
more is claimed until a read succeeds; while a 429's Retry-After runs, nothing is claimed: an
outage, a lapsed token or a rate limit cannot turn a queue of notices into refusals. Deadlines are
monotonic seconds on the ledger's clock: a flush waits for the lock no longer than its deadline,
claims nothing with too little time left, and caps every request at it. Once ``stop`` is set
nothing more is listed or claimed; a listing under way is not waited for (``shell.stoppable``) and
its intents stay as they were, while a request already made is waited for. A ledger that cannot
be read or settled raises ``OutboxLedgerError``; a listing that fails only backs off.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from functools import partial
from typing import Protocol

from core import notes
from core.adoption import Adopt, Indeterminate, decide_adoption, rivals, worker_message_ids
from core.destinations import Destination, ListedMessage
from core.edges import Actor, GuardState, IntentState
from core.intent_kinds import IntentKind
from core.message_kinds import Cancel, Claim, HoldBack, decide_claim
from core.posting import (
    LISTING_TIMEOUT,
    OUTBOX_TICK,
    POST_TIMEOUT,
    RECONCILE_AFTER,
    RUN_BATCH,
    RUN_RECONCILE_BATCH,
    Backoff,
    Created,
    GiveUp,
    PostOutcome,
    RefusalCause,
    Refuse,
    Refused,
    Retry,
    StopRetrying,
    after_failed_listing,
    after_refusal,
    by_destination,
    listing_since,
    may_claim,
    request_timeout,
    wait_after_batch,
)
from core.text import message_text
from shell.basecamp.errors import ListingFailed, Unlistable
from shell.crashpoints import pause_at
from shell.ledger import deliveries, snapshots, tasks
from shell.ledger import outbox as rows
from shell.ledger.connection import Ledger, LedgerError
from shell.log_format import ids
from shell.stoppable import unless_stopped

log = logging.getLogger("connector.outbox")


class OutboxLedgerError(Exception):
    """The ledger could not be read or settled: the connector must not carry on as if it had."""


LEDGER_FAILURES = (sqlite3.Error, rows.IntentMoved, LedgerError)


@contextmanager
def _settling(what: str) -> Iterator[None]:
    try:
        yield
    except LEDGER_FAILURES as error:
        raise OutboxLedgerError(f"the ledger could not {what}: {error}") from error


def landed(connection: sqlite3.Connection, row: rows.IntentRow, receipt_id: int, note: str,
           now: datetime) -> None:
    """An intent's message is known: its receipt, and a worker message's id on its task row."""
    rows.record_receipt(connection, row.id, receipt_id, note, now)
    deliveries.record_worker_message(connection, row.kind, row.task_id, row.event_id, receipt_id)


class Poster(Protocol):
    """What the outbox needs of Basecamp: ``shell.basecamp.client.BasecampClient`` or a fake."""

    def post(self, destination: Destination, body: str, deadline: float | None = None) -> PostOutcome: ...
    def list(self, destination: Destination, since: datetime, creator_id: int,
             deadline: float) -> list[ListedMessage]: ...
    def rate_limited_for(self) -> float: ...
    def probe(self, deadline: float) -> None: ...


class SendResult(StrEnum):
    sent = "sent"
    refused = "refused"
    retry = "retry"  # provably never reached Basecamp: pending again, due after a backoff
    uncertain = "uncertain"
    canceled = "canceled"
    held_back = "held_back"  # an earlier word of its task has not landed: pending still, untouched
    nothing_due = "nothing_due"
    held = "held"
    waiting = "waiting"  # an outage or a rate limit: claim nothing for now
    no_time = "no_time"


CLAIMED = frozenset({SendResult.sent, SendResult.refused, SendResult.uncertain, SendResult.canceled})
ENDS_A_FLUSH = frozenset({SendResult.nothing_due, SendResult.held, SendResult.waiting, SendResult.no_time})


@dataclass(frozen=True, slots=True)
class OutboxOptions:
    reconcile_after: timedelta = RECONCILE_AFTER
    post_timeout: timedelta = POST_TIMEOUT
    listing_timeout: timedelta = LISTING_TIMEOUT
    run_batch: int = RUN_BATCH
    run_reconcile_batch: int = RUN_RECONCILE_BATCH
    tick: timedelta = OUTBOX_TICK
    probe_timeout: timedelta = timedelta(seconds=10)


@dataclass(slots=True)
class FlushSummary:
    results: list[SendResult] = field(default_factory=list)

    def count(self, result: SendResult) -> int:
        return self.results.count(result)

    def claims(self) -> int:
        return sum(result in CLAIMED for result in self.results)


class Outbox:
    def __init__(self, ledger: Ledger, poster: Poster, agent_id: int,
                 options: OutboxOptions | None = None) -> None:
        self._ledger = ledger
        self._poster = poster
        self._agent_id = agent_id
        self._options = options or OutboxOptions()
        self._clock = ledger.clock
        self._lock = threading.Lock()
        self._needs_a_read = False

    # -- sending ---------------------------------------------------------------------------

    def flush(self, deadline: float | None = None, limit: int | None = None,
              stop_when_uncertain: bool = False, leaving: frozenset[IntentKind] = frozenset(),
              stop: threading.Event | None = None) -> FlushSummary:
        """Send what is due, at most ``limit`` claims; intents of a kind in ``leaving`` stay
        pending, untouched. One held back is passed over and counts toward no limit, until another
        intent has been claimed or canceled: the word it waited for may be that one."""
        summary = FlushSummary()
        passed_over: set[int] = set()
        held_back: set[int] = set()
        taken = 0
        while (limit is None or taken < limit) and not (stop is not None and stop.is_set()):
            looked_at = set(passed_over)
            result = self.send_next(passed_over, deadline, leaving)
            summary.results.append(result)
            if result in ENDS_A_FLUSH or (stop_when_uncertain and result is SendResult.uncertain):
                break
            if result is SendResult.held_back:
                held_back |= passed_over - looked_at
                continue
            taken += 1
            passed_over -= held_back
            held_back.clear()
        return summary

    def send_next(self, passed_over: set[int], deadline: float | None = None,
                  leaving: frozenset[IntentKind] = frozenset()) -> SendResult:
        """Claim the next due intent and make its one request, holding the lock no longer than
        ``deadline`` allows: a shutdown's flush never outwaits its bound behind a request in
        flight on another thread."""
        wait = -1.0 if deadline is None else max(0.0, deadline - self._clock.monotonic())
        if not self._lock.acquire(timeout=wait):
            return SendResult.no_time
        try:
            return self._claim_and_post(passed_over, deadline, leaving)
        finally:
            self._lock.release()

    def _claim_and_post(self, passed_over: set[int], deadline: float | None,
                        leaving: frozenset[IntentKind]) -> SendResult:
        now = self._clock.now()
        if not may_claim(now, self._wall(deadline), self._options.post_timeout):
            return SendResult.no_time
        if not self._may_send(deadline):
            return SendResult.waiting
        with _settling("claim"), self._ledger.write() as connection:
            row = rows.next_due(connection, now, passed_over, leaving)
            if row is None:
                return SendResult.held if rows.held(connection) else SendResult.nothing_due
            passed_over.add(row.id)
            decision = decide_claim(row.kind, rows.claim_snapshot(connection, row))
            match decision:
                case Cancel(note):
                    rows.cancel(connection, row.id, IntentState.pending, note, now)
                case Claim(fires_guard):
                    rows.claim(connection, row.id, now)
                    if fires_guard and row.event_id is not None:
                        deliveries.fire_guard(connection, row.event_id)
                case HoldBack():
                    pass
        if isinstance(decision, HoldBack):
            return SendResult.held_back
        if isinstance(decision, Cancel):
            self._log(row, "canceled", note=decision.note)
            return SendResult.canceled
        self._log(row, "sending")
        pause_at("after_claim")
        timeout = request_timeout(self._clock.now(), self._wall(deadline), self._options.post_timeout)
        request_deadline = self._clock.monotonic() + timeout.total_seconds()
        outcome = self._poster.post(row.destination, row.body, request_deadline)
        pause_at("after_post")
        if isinstance(outcome, Refused):
            return self._settle_refusal(row, outcome, waited_due=now - row.not_before)
        with _settling("record the post's outcome"), self._ledger.write() as connection:
            if isinstance(outcome, Created):
                landed(connection, row, outcome.id, "", self._clock.now())
            else:
                rows.defer(connection, row.id, self._clock.now() + self._options.reconcile_after)
        if isinstance(outcome, Created):
            self._log(row, "sent", receipt_id=outcome.id)
            return SendResult.sent
        self._log(row, "sending", note=f"uncertain: {outcome.cause}", status=outcome.status)
        return SendResult.uncertain

    def _settle_refusal(self, row: rows.IntentRow, outcome: Refused, waited_due: timedelta) -> SendResult:
        """Nothing was created: pending again if it never reached Basecamp, else canceled."""
        now = self._clock.now()
        after = after_refusal(outcome, now, row.retrying_since, waited_due)
        with _settling("record the post's outcome"), self._ledger.write() as connection:
            match after:
                case Retry(note, due_at, since):
                    rows.retry(connection, row.id, note, due_at, since)
                case StopRetrying(note) | Refuse(note):
                    rows.cancel(connection, row.id, IntentState.sending, note, now)
                    if row.kind is IntentKind.guard_ack and row.event_id is not None:
                        deliveries.guard_never_went_out(connection, row.event_id, GuardState.refused,
                                                        Actor.automatic)
                    if row.kind is IntentKind.worker_reply and row.task_id is not None:
                        tasks.read_completion_again(connection, row.task_id, now)
        if outcome.cause is RefusalCause.not_connected or after.note == notes.TOKEN_REFUSED:
            self._needs_a_read = True
        if isinstance(after, Retry):
            self._log(row, "pending", note=f"{after.note} ({outcome.detail})", due=after.due_at.isoformat())
            return SendResult.retry
        self._log(row, "canceled", note=f"{after.note} ({outcome.detail})", status=outcome.status)
        return SendResult.refused

    def _may_send(self, deadline: float | None) -> bool:
        """No claim while a 429's wait runs, or after a failed connection or a refused token
        until a read succeeds."""
        if self._poster.rate_limited_for() > 0:
            return False
        if not self._needs_a_read:
            return True
        probe_deadline = self._clock.monotonic() + self._options.probe_timeout.total_seconds()
        if deadline is not None:
            probe_deadline = min(probe_deadline, deadline)
        try:
            self._poster.probe(probe_deadline)
        except Exception as error:
            log.info("outbox waiting: no read of Basecamp succeeds yet (%s)", type(error).__name__)
            return False
        self._needs_a_read = False
        return True

    # -- reconciling -----------------------------------------------------------------------

    def reconcile(self, age: timedelta | None = None, limit: int | None = None, deadline: float | None = None,
                  stop: threading.Event | None = None) -> int:
        """List the destinations of sending intents older than ``age`` (by default the time a
        request needs to land), until ``stop``; the number of intents listed."""
        with self._lock:
            now = self._clock.now()
            wait = self._options.reconcile_after if age is None else age
            with _settling("list sending intents"), self._ledger.read() as connection:
                due = rows.due_for_reconciliation(connection, now - wait, now, limit)
            listed = 0
            for group in by_destination(due):
                if deadline is not None and self._clock.monotonic() >= deadline:
                    break
                if not self._reconcile_at(group, deadline, stop):
                    break
                listed += len(group)
            return listed

    def _reconcile_at(self, group: list[rows.IntentRow], deadline: float | None,
                      stop: threading.Event | None) -> bool:
        """One listing for every intent of ``group`` (one destination), back to the earliest's
        ``since``; each intent then settled in its own transaction. False when ``stop`` came
        first: the group is left as it was."""
        since = min(listing_since(row.sending_at, row.created_at) for row in group)
        bound = self._clock.monotonic() + self._options.listing_timeout.total_seconds()
        if deadline is not None:
            bound = min(bound, deadline)
        try:
            listing = partial(self._poster.list, group[0].destination, since, self._agent_id, bound)
            listed = unless_stopped(listing, stop, "reconcile-listing")
        except ListingFailed as error:
            if deadline is not None and self._clock.monotonic() >= deadline:
                return True  # the caller's bound ended the listing: that says nothing of the destination
            for row in group:
                self._listing_failed(row, isinstance(error, Unlistable), str(error))
            return True
        if listed is None:
            named = ",".join(str(row.id) for row in group)
            log.info("outbox: stopped while listing; intent(s) %s stay sending, to be reconciled later",
                     named)
            return False
        for row in group:
            self._settle_listing(row, listed)
        return True

    def _settle_listing(self, row: rows.IntentRow, listed: list[ListedMessage]) -> None:
        since = listing_since(row.sending_at, row.created_at)
        now = self._clock.now()
        with _settling("settle a reconciliation"), self._ledger.write() as connection:
            current = rows.intent(connection, row.id)
            if current is None or current.state is not IntentState.sending:
                return
            words = message_text(current.body)
            matching = [message.id for message in listed if message.text == words]
            worker_rows = snapshots.worker_task_events(connection, matching)
            kind = current.destination.kind
            decision = decide_adoption(
                intent_id=current.id, body=current.body, listed=listed, since=since, agent_id=self._agent_id,
                owned_receipts=rows.receipts_owned_by_others(connection, current.id, kind, matching),
                worker_messages=worker_message_ids(kind, worker_rows),
                rivals=rivals(current.id, rows.without_receipt_at(connection, current)),
            )
            match decision:
                case Adopt(receipt_id):
                    landed(connection, current, receipt_id, notes.ADOPTED, now)
                case Indeterminate(note):
                    rows.make_indeterminate(connection, current.id, note, now)
        match decision:
            case Adopt(receipt_id):
                self._log(current, "sent", receipt_id=receipt_id, note=notes.ADOPTED)
            case Indeterminate(note):
                self._log(current, "indeterminate", note=note)

    def _listing_failed(self, row: rows.IntentRow, unlistable: bool, detail: str) -> None:
        now = self._clock.now()
        with _settling("record a failed listing"), self._ledger.write() as connection:
            current = rows.intent(connection, row.id)
            if current is None or current.state is not IntentState.sending:
                return
            outcome = after_failed_listing(current.reconcile_failures, unlistable, now)
            match outcome:
                case Backoff(reconcile_at, failures):
                    rows.defer(connection, current.id, reconcile_at, failures)
                case GiveUp(note, failures):
                    rows.make_indeterminate(connection, current.id, note, now, failures)
        match outcome:
            case Backoff(reconcile_at, failures):
                log.info("outbox intent=%d listing failed (%d): %s; next at %s",
                         row.id, failures, detail, reconcile_at.isoformat(), extra=_ids_of(row))
            case GiveUp(note, failures):
                self._log(row, "indeterminate", note=note)

    # -- the lifecycle ---------------------------------------------------------------------

    def run_once(self, stop: threading.Event | None = None) -> FlushSummary:
        summary = self.flush(limit=self._options.run_batch, stop=stop)
        self.reconcile(limit=self._options.run_reconcile_batch, stop=stop)
        return summary

    def run(self, stop: threading.Event, beat: Callable[[], None] = lambda: None) -> None:
        """Tick until ``stop`` is set, calling ``beat`` as each tick starts. A ledger failure is
        logged and the tick tried again."""
        while not stop.is_set():
            beat()
            wait = self._options.tick
            try:
                claims = self.run_once(stop).claims()
                wait = wait_after_batch(claims, self._options.run_batch, self._options.tick)
            except OutboxLedgerError as error:
                log.error("outbox: %s", error)
            stop.wait(wait.total_seconds())

    def _wall(self, deadline: float | None) -> datetime | None:
        if deadline is None:
            return None
        return self._clock.now() + timedelta(seconds=deadline - self._clock.monotonic())

    def _log(self, row: rows.IntentRow, state: str, **details: object) -> None:
        extra = "".join(f" {key}={value}" for key, value in details.items() if value is not None)
        log.info("outbox intent=%d kind=%s state=%s event=%s attempt=%s%s",
                 row.id, row.kind, state, row.event_id, row.attempt_id, extra,
                 extra=_ids_of(row, state=state))


def _ids_of(row: rows.IntentRow, **more: object) -> dict[str, object]:
    return ids(intent=row.id, kind=row.kind, event_id=row.event_id, task=row.task_id, attempt=row.attempt_id,
               **more)
