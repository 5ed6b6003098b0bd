"""The sender: claim, exactly one request, then a receipt -- or, after doubt, a listing.

Rules (the outbox's ten invariants):
1. The only path to a request is a claim: pending -> sending, committed, by compare-and-set,
   before the request is made. A guard's armed task events are marked fired in the claim's
   own transaction, and that is final (invariants 3 and 9).
2. At claim time its kind's claim rule (``core.message_kinds``) decides, from the snapshot its
   kind's row names (``shell.outbox_claims``), whether the intent is still called for; if not,
   it is canceled with a note and nothing is sent.
3. A claimed intent gets exactly one request. A receipt makes it sent; a request that provably
   never reached Basecamp (no connection, never written, 429, 408) goes back to pending with its
   cause, due after ``core.not_created``'s backoff, and is canceled for a person after a day of
   that; a 401 (Basecamp refused the token, after the client's one refresh) goes back to pending
   at once and is never given up; Basecamp's refusal of the message (nothing was created)
   cancels it with the refused note, for a person to resend; any doubt leaves it
   sending, to be reconciled once the request has had ``reconcile_after`` to land, counted
   from the failure. Nothing sending is ever posted again (invariant 4).
4. Reconciliation lists each destination once for all its due intents
   (``core.reconcile_groups``) and applies ``core.adoption`` to each: adopt the one unowned,
   non-worker, rival-free match, or leave the intent indeterminate for a person. A failing
   listing backs off (``core.reconcile_schedule``) and gives up as indeterminate after ten failures; an
   unlistable destination is indeterminate at once (invariants 5 and 10).
5. Sending and reconciling are serialized by one lock, so an intent this process is sending
   is never reconciled under it. One flush never claims the same intent twice. A flush with a
   deadline waits for the lock no longer than the deadline (a shutdown's bound holds).
6. The hold pauses sending; reconciliation goes on. After a request that could not connect, or
   whose token Basecamp refused (401), nothing more is claimed until a read succeeds (with the
   token, refreshed once if it can be); while a 429's Retry-After runs, nothing is claimed: an
   outage, a lapsed token or a rate limit cannot turn a queue of notices into refusals.
7. A ledger that cannot be read or settled raises ``OutboxLedgerError``: it stops a start,
   whatever the deadline does. A listing that fails only backs off.
8. Deadlines are monotonic seconds on the ledger's clock. With a deadline and less than
   ``MIN_POST_WINDOW`` left nothing is claimed; every request is capped at the deadline.
9. A flush leaves the intents of a kind in ``leaving`` pending, untouched. Starting is not the
   outbox's: ``shell.connector`` runs the one start sequence (reconcile, sweep, recover, send).
10. Once ``stop`` (the start's, or the loop's) is set, nothing is listed or claimed; a listing under
   way is not waited for (``shell.stoppable``): its intents stay as they were -- sending, failures
   uncounted -- for a later reconciliation. A request already made is waited for (its timeout).
11. A worker's words (``core.intent_kinds.WORKER_KINDS``) go the same way as the connector's own
   messages. When one lands (a receipt, or adopted by reconciliation) its id is recorded on its
   task row as the event's ``ack_id`` or ``reply_id`` in the same transaction (``landed``).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from functools import cache, partial
from typing import Protocol

from core import notes
from core.adoption import Adopt, Indeterminate, decide_adoption, rivals, worker_message_ids
from core.destinations import Destination, ListedMessage
from core.edges import IntentState
from core.intents import IntentKind
from core.message_kinds import Cancel, Claim, decide_claim
from core.not_created import Refuse, Retry, StopRetrying, after_refusal
from core.outbox_policy import (
    OUTBOX_TICK,
    POST_TIMEOUT,
    RUN_BATCH,
    RUN_RECONCILE_BATCH,
    may_claim,
    request_timeout,
    wait_after_batch,
)
from core.posting import Created, PostOutcome, RefusalCause, Refused
from core.reconcile_groups import by_destination
from core.reconcile_schedule import (
    LISTING_TIMEOUT,
    RECONCILE_AFTER,
    Backoff,
    GiveUp,
    after_failed_listing,
    listing_since,
)
from core.text import message_text
from shell.basecamp.errors import ListingFailed, Unlistable
from shell.crashpoints import pause_at
from shell.ledger import deliveries, snapshots
from shell.ledger import outbox as rows
from shell.ledger.connection import Ledger
from shell.ledger.outbox_due import ClaimRow, due_now
from shell.outbox_claims import any_armed, claim_facts
from shell.outbox_turns import LEDGER_FAILURES, OutboxLedgerError, Settling, ledger_failure
from shell.stoppable import unless_stopped

log = logging.getLogger("connector.outbox")


def landed(
    connection: sqlite3.Connection,
    row: rows.IntentRow | ClaimRow,
    receipt_id: int,
    note: str,
    now: datetime,
) -> None:
    """An intent's message is known: its receipt, and a worker message's id on its task row (rule 11)."""
    rows.record_receipt(connection, row.id, receipt_id, note, now)
    deliveries.record_worker_message(connection, row.kind, row.task_id, row.event_id, receipt_id)


@cache
def _settling(what: str) -> Settling:
    """One ``Settling`` per ``what``, kept: it holds nothing else, and a flush enters two an intent."""
    return Settling(what)


class Poster(Protocol):
    """What the outbox needs of Basecamp: ``shell.basecamp.client.BasecampClient`` or a fake."""

    def post(self, destination: Destination, body: str, deadline: float | None = None) -> PostOutcome: ...
    def list(
        self, destination: Destination, since: datetime, creator_id: int, deadline: float
    ) -> list[ListedMessage]: ...
    def rate_limited_for(self) -> float: ...
    def probe(self, deadline: float) -> None: ...


class SendResult(StrEnum):
    sent = "sent"
    refused = "refused"
    retry = "retry"  # provably never reached Basecamp: pending again, due after a backoff
    uncertain = "uncertain"
    canceled = "canceled"
    nothing_due = "nothing_due"
    held = "held"
    waiting = "waiting"  # an outage or a rate limit: claim nothing for now
    no_time = "no_time"


CLAIMED = frozenset({SendResult.sent, SendResult.refused, SendResult.uncertain, SendResult.canceled})
_ENDS_A_FLUSH = frozenset({SendResult.nothing_due, SendResult.held, SendResult.waiting, SendResult.no_time})


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
        """Intents this flush claimed (sent, refused, left uncertain or canceled at the claim)."""
        return sum(result in CLAIMED for result in self.results)


class Outbox:
    """The one sender of lifecycle messages for one ledger."""

    def __init__(
        self, ledger: Ledger, poster: Poster, agent_id: int, options: OutboxOptions | None = None
    ) -> None:
        self._ledger = ledger
        self._poster = poster
        self._agent_id = agent_id
        self._options = options or OutboxOptions()
        self._clock = ledger.clock
        self._lock = threading.Lock()
        self._needs_a_read = False

    # -- sending ---------------------------------------------------------------------------

    def flush(
        self,
        deadline: float | None = None,
        limit: int | None = None,
        stop_when_uncertain: bool = False,
        leaving: frozenset[IntentKind] = frozenset(),
        stop: threading.Event | None = None,
    ) -> FlushSummary:
        """Send what is due, at most ``limit`` claims; never the same intent twice. Intents of a
        kind in ``leaving`` stay pending, untouched (rule 9); none claimed after ``stop`` (rule 10)."""
        summary = FlushSummary()
        claimed: set[int] = set()
        while (limit is None or len(claimed) < limit) and not (stop is not None and stop.is_set()):
            result = self.send_next(claimed, deadline, leaving)
            summary.results.append(result)
            if result in _ENDS_A_FLUSH:
                break
            if stop_when_uncertain and result is SendResult.uncertain:
                break
        return summary

    def send_next(
        self,
        claimed: set[int],
        deadline: float | None = None,
        leaving: frozenset[IntentKind] = frozenset(),
    ) -> SendResult:
        """Claim the next due intent and make its one request, holding this process's one lock
        (rule 5), waited for no longer than ``deadline`` allows: a shutdown's flush never outwaits
        its bound behind a request in flight on another thread."""
        wait = -1.0 if deadline is None else max(0.0, deadline - self._clock.monotonic())
        if not self._lock.acquire(timeout=wait):
            return SendResult.no_time
        try:
            return self._claim_and_post(claimed, deadline, leaving)
        finally:
            self._lock.release()

    def _claim_and_post(
        self, claimed: set[int], deadline: float | None, leaving: frozenset[IntentKind]
    ) -> SendResult:
        now = self._clock.now()
        deadline_at = self._wall(deadline)
        if not may_claim(now, deadline_at, self._options.post_timeout):
            return SendResult.no_time
        if not self._may_send(deadline):
            return SendResult.waiting
        try:  # rule 7; the hot path's two writes are not wrapped in a ``Settling`` (bin/bench outbox)
            with self._ledger.write() as connection:
                due = due_now(connection, now, claimed, leaving)
                if due.held:
                    return SendResult.held
                row = due.row
                if row is None:
                    return SendResult.nothing_due
                claimed.add(row.id)
                facts = claim_facts(connection, row, due)
                decision = decide_claim(row.kind, facts)
                match decision:
                    case Cancel(note):
                        rows.cancel(connection, row.id, IntentState.pending, note, now)
                    case Claim(mark_guard_fired):
                        rows.claim(connection, row.id, now)
                        if mark_guard_fired and row.event_id is not None and any_armed(facts):
                            deliveries.fire_guard(connection, row.event_id)
        except LEDGER_FAILURES as error:
            raise ledger_failure("claim", error) from error
        informing = log.isEnabledFor(logging.INFO)
        if isinstance(decision, Cancel):
            self._log(row, "canceled", note=decision.note)
            return SendResult.canceled
        if informing:
            self._log(row, "sending")
        pause_at("after_claim")
        timeout = request_timeout(self._clock.now(), self._wall(deadline), self._options.post_timeout)
        outcome = self._poster.post(
            row.destination, row.body, self._clock.monotonic() + timeout.total_seconds()
        )
        pause_at("after_post")
        return self._settle_post(row, outcome, informing)

    def _settle_post(self, row: ClaimRow, outcome: PostOutcome, informing: bool) -> SendResult:
        now = self._clock.now()
        if isinstance(outcome, Refused):
            return self._settle_refusal(row, outcome, now)
        try:
            with self._ledger.write() as connection:
                if isinstance(outcome, Created):
                    landed(connection, row, outcome.id, "", now)
                else:
                    rows.defer(connection, row.id, now + self._options.reconcile_after)
        except LEDGER_FAILURES as error:
            raise ledger_failure("record the post's outcome", error) from error
        if isinstance(outcome, Created):
            if informing:
                self._log(row, "sent", receipt_id=outcome.id)
            return SendResult.sent
        self._log(row, "sending", note=f"uncertain: {outcome.cause}", status=outcome.status)
        return SendResult.uncertain

    def _settle_refusal(self, row: ClaimRow, outcome: Refused, now: datetime) -> SendResult:
        """Nothing was created: pending again if it never reached Basecamp, else canceled (rule 3)."""
        after = after_refusal(outcome, now, row.retrying_since)
        with _settling("record the post's outcome"), self._ledger.write() as connection:
            match after:
                case Retry(note, due_at, since):
                    rows.retry(connection, row.id, note, due_at, since)
                case StopRetrying(note) | Refuse(note):
                    rows.cancel(connection, row.id, IntentState.sending, note, now)
        if outcome.cause is RefusalCause.not_connected or after.note == notes.TOKEN_REFUSED:
            self._needs_a_read = True  # rule 6: an outage, or a token Basecamp refuses
        if isinstance(after, Retry):
            self._log(row, "pending", note=f"{after.note} ({outcome.detail})", due=after.due_at.isoformat())
            return SendResult.retry
        self._log(row, "canceled", note=f"{after.note} ({outcome.detail})", status=outcome.status)
        return SendResult.refused

    def _may_send(self, deadline: float | None) -> bool:
        """No claim while a 429's wait runs, or after a failed connection or a refused token
        until a read succeeds (rule 6)."""
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

    def reconcile(
        self, age: timedelta | None = None, limit: int | None = None, deadline: float | None = None,
        stop: threading.Event | None = None,
    ) -> int:  # fmt: skip
        """List the destinations of sending intents older than ``age``, until ``stop`` (rule 10);
        the number listed."""
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

    def _reconcile_at(
        self, group: list[rows.IntentRow], deadline: float | None, stop: threading.Event | None
    ) -> bool:
        """One listing for every intent of ``group`` (one destination), back to the earliest's
        ``since``; each intent is then settled on its own, in its own transaction (rule 4). False
        when ``stop`` came first: the group is left as it was (rule 10)."""
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
            ids = ",".join(str(row.id) for row in group)
            log.info("outbox: stopped while listing; intent(s) %s stay sending, to be reconciled later", ids)
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
            decision = decide_adoption(
                intent_id=current.id,
                body=current.body,
                listed=listed,
                since=since,
                agent_id=self._agent_id,
                owned_receipts=rows.receipts_owned_by_others(
                    connection, current.id, current.destination.kind, matching
                ),
                worker_messages=worker_message_ids(current.destination.kind, worker_rows),
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
                log.info(
                    "outbox intent=%d listing failed (%d): %s; next at %s",
                    row.id,
                    failures,
                    detail,
                    reconcile_at.isoformat(),
                )
            case GiveUp(note, failures):
                self._log(row, "indeterminate", note=note)

    # -- the lifecycle ---------------------------------------------------------------------

    def run_once(self, stop: threading.Event | None = None) -> FlushSummary:
        """One tick: a batch of sends, then at most one listing; ``stop`` cuts either short (rule 10)."""
        summary = self.flush(limit=self._options.run_batch, stop=stop)
        self.reconcile(limit=self._options.run_reconcile_batch, stop=stop)
        return summary

    def run(self, stop: threading.Event, beat: Callable[[], None] = lambda: None) -> None:
        """Tick until ``stop`` is set, calling ``beat`` as each tick starts (``shell.heartbeats``).
        A ledger failure is logged and the tick tried again."""
        while not stop.is_set():
            beat()
            wait = self._options.tick
            try:
                claims = self.run_once(stop).claims()
                wait = wait_after_batch(claims, self._options.run_batch, self._options.tick)
            except OutboxLedgerError as error:
                log.error("outbox: %s", error)
            stop.wait(wait.total_seconds())

    # -- helpers ---------------------------------------------------------------------------

    def _wall(self, deadline: float | None) -> datetime | None:
        if deadline is None:
            return None
        return self._clock.now() + timedelta(seconds=deadline - self._clock.monotonic())

    def _log(self, row: rows.IntentRow | ClaimRow, state: str, **details: object) -> None:
        if not log.isEnabledFor(logging.INFO):
            return
        extra = "".join(f" {key}={value}" for key, value in details.items() if value is not None)
        log.info(
            "outbox intent=%d kind=%s state=%s event=%s attempt=%s%s",
            row.id,
            row.kind,
            state,
            row.event_id,
            row.attempt_id,
            extra,
        )
