"""The named checks run after every step of a whole-connector run, and at its end.

Rules:
1. Each check has a name (``CHECKS``) and answers what it found, or nothing. The outbox's
   ten invariants are ``outbox-1`` .. ``outbox-10`` (``CHECKS`` says each); beside them: ``no-message-doubled``,
   ``no-instruction-twice``, ``no-record-lost`` and ``no-event-missed`` (at the end: every
   mention is a record, or was expired unread inside a gap the feed's 410 made), ``moves-are-edges``,
   ``receipts-unique-and-final``, ``nothing-sending-at-quiescence`` (at the end), and the hold's
   and the rate limit's: nothing sent or launched and no first pull while a hold stands, no
   post while a 429's Retry-After runs.
2. A check judges the ledger against ground truth the connector cannot see: which request
   stored which message (``SimBasecamp``), which worker was handed which instruction
   (``Workers.handed``), and what a person decided (``Truth``). Every state change is read from
   the audit triggers this module adds to the run's ledger (``AUDIT_SQL``), with the actors the
   step's part may act as.
3. A check found at a request (``request_starts``: a request that follows no fresh claim, is
   made under the hold or during a 429's Retry-After, fires a guard a worker holds, or sends a
   guard before its delay: ``tests.sim.whole.guards``) is
   recorded and reported after the step:
   nothing is raised inside the connector's own code.
4. A step that changed no row through the ledger's one connection (SQLite's ``total_changes``,
   triggers included) and stored no message is judged without reading the ledger: the audit
   and the outbox read the same as after the step before.
5. The checks that judge a rule by its own terms (adoption's proof, the adopted reply, the
   guard's delay and trigger, a retry's wait, a stop's bound) are ``tests.sim.whole.rules``'; they
   read the audit's ``due``, ``at`` and ``new_note`` (a move's new due time, an intent's creation,
   the note a move wrote) and the listings Basecamp answered in the step (``SimBasecamp.listed``).
   An instruction counts as handed for ``no-instruction-twice`` when a worker's prompt named it,
   pulled or not (``Workers.handed``).
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from returns.result import Success

from core import notes
from core.destinations import Destination
from core.edges import (
    ATTEMPT_EDGES,
    DELIVERY_EDGES,
    GUARD_EDGES,
    INTENT_EDGES,
    RECORD_EDGES,
    Actor,
    AttemptState,
    DeliveryState,
    GuardState,
    IntentState,
    LifecycleTable,
    RecordState,
)
from core.posting import MAX_RECONCILE_FAILURES, Created, Refused, not_created_cause
from core.text import message_text
from tests.sim.whole import guards, inbox, last_word, rules, token_outage, words

if TYPE_CHECKING:
    from tests.sim.whole.run import Run

CHECKS = (
    "outbox-1 intent written with its transition",
    "outbox-2 one intent per thing",
    "outbox-3 no request without a sending row",
    "outbox-4 nothing sending is sent again",
    "outbox-5 adoption only of its own message",
    "outbox-6 a receipt belongs to one intent, never changes",
    "outbox-7 intent states move along their edges, a person's only by a person",
    "outbox-8 a worker told to acknowledge never also gets the guard",
    "outbox-9 a guard is fired from its claim",
    "outbox-10 reconciliation gives up after ten failures",
    "no-message-doubled",
    "no-instruction-twice",
    "no-record-lost",
    "no-event-missed",
    "no-addressed-event-missed",  # tests.sim.whole.inbox
    "no-live-worker-settled",
    "connector-never-fails",
    "moves-are-edges",
    "receipts-unique-and-final",
    "nothing-sending-at-quiescence",
    "nothing-sent-under-a-hold",
    "nothing-launched-under-a-hold",
    "no-first-pull-under-a-hold",
    "no-post-during-a-retry-after",
    *words.CHECKS,
    last_word.CHECK,
    token_outage.CHECK,
    *guards.CHECKS,
    *rules.NAMES,
)

AUDIT_SQL = (
    "CREATE TABLE IF NOT EXISTS sim_audit (seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL,"
    " key TEXT NOT NULL, old TEXT, new TEXT NOT NULL, note TEXT, old_receipt INTEGER, new_receipt INTEGER,"
    " cause TEXT, due TEXT, at TEXT, new_note TEXT)",
    "CREATE TRIGGER sim_outbox_insert AFTER INSERT ON outbox BEGIN INSERT INTO sim_audit"
    " (tbl, key, old, new, due, at, cause) VALUES ('outbox', NEW.id, NULL, NEW.state, NEW.not_before,"
    " NEW.created_at, NEW.kind || ':' || CASE"
    " WHEN NEW.kind IN ('guard_ack', 'holding_reply') THEN"
    " (SELECT state FROM events WHERE id = NEW.event_id) WHEN NEW.kind LIKE 'worker_%' THEN"
    " (SELECT delivery FROM task_events WHERE task_id = NEW.task_id AND event_id = NEW.event_id) ELSE"
    " (SELECT state FROM attempts WHERE id = NEW.attempt_id) END); END",
    "CREATE TRIGGER sim_outbox_update AFTER UPDATE OF state, receipt_id ON outbox WHEN NEW.state IS NOT OLD.state"
    " OR NEW.receipt_id IS NOT OLD.receipt_id BEGIN INSERT INTO sim_audit"
    " (tbl, key, old, new, note, old_receipt, new_receipt, due, new_note) VALUES ('outbox', NEW.id, OLD.state,"
    # a retry (sending -> pending) is judged by the cause it writes, every other move by the note it left
    " NEW.state, CASE WHEN OLD.state = 'sending' AND NEW.state = 'pending' THEN NEW.note ELSE OLD.note END,"
    " OLD.receipt_id, NEW.receipt_id, NEW.not_before, NEW.note); END",
    "CREATE TRIGGER sim_events AFTER UPDATE OF state ON events WHEN NEW.state IS NOT OLD.state BEGIN"
    " INSERT INTO sim_audit (tbl, key, old, new) VALUES ('events', NEW.id, OLD.state, NEW.state); END",
    "CREATE TRIGGER sim_delivery AFTER UPDATE OF delivery ON task_events WHEN NEW.delivery IS NOT OLD.delivery"
    " BEGIN INSERT INTO sim_audit (tbl, key, old, new) VALUES ('delivery', NEW.task_id || ':' || NEW.event_id,"
    " OLD.delivery, NEW.delivery); END",
    "CREATE TRIGGER sim_guard AFTER UPDATE OF guard ON task_events WHEN NEW.guard IS NOT OLD.guard"
    " BEGIN INSERT INTO sim_audit (tbl, key, old, new) VALUES ('guard', NEW.task_id || ':' || NEW.event_id,"
    " OLD.guard, NEW.guard); END",
    "CREATE TRIGGER sim_adopted AFTER UPDATE OF adopted_reply_id ON task_events WHEN NEW.adopted_reply_id"
    " IS NOT NULL AND OLD.adopted_reply_id IS NULL BEGIN INSERT INTO sim_audit (tbl, key, old, new) VALUES"
    " ('adopted', NEW.task_id || ':' || NEW.event_id, NULL, NEW.adopted_reply_id); END",
    "CREATE TRIGGER sim_attempts AFTER UPDATE OF state ON attempts WHEN NEW.state IS NOT OLD.state BEGIN"
    " INSERT INTO sim_audit (tbl, key, old, new) VALUES ('attempts', NEW.id, OLD.state, NEW.state); END",
)

_TABLES: dict[str, tuple[LifecycleTable[Any], type]] = {
    "outbox": (INTENT_EDGES, IntentState),
    "events": (RECORD_EDGES, RecordState),
    "delivery": (DELIVERY_EDGES, DeliveryState),
    "guard": (GUARD_EDGES, GuardState),
    "attempts": (ATTEMPT_EDGES, AttemptState),
}
_OUTBOX = "SELECT id, kind, state, note, receipt_id, message_kind, bucket_id, recording_id, body, event_id," \
          " attempt_id, occurrence, reconcile_failures, not_before, sending_at FROM outbox ORDER BY id"


def _found(run: Run, check: str, detail: str) -> None:
    run.truth.violations.append((check, detail))


# -- at a request (rule 3) -------------------------------------------------------------------------

def request_starts(run: Run, destination: Destination, body: str) -> int:
    """Which intent this request is for; what it breaks, recorded."""
    truth = run.truth
    with run.connector.ledger.read() as connection:
        held = connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None
        mine = connection.execute(
            "SELECT id, kind, event_id FROM outbox WHERE state = 'sending' AND message_kind = ?"
            " AND bucket_id = ? AND recording_id = ? AND body = ? ORDER BY id",
            (str(destination.kind), destination.bucket_id, destination.recording_id, body)).fetchall()
        fresh = [row for row in mine if row[0] not in truth.requested_in_era]
        if held:
            _found(run, "nothing-sent-under-a-hold", f"a request to {destination} under the hold")
        if run.basecamp.rate_limited_for() > 0:
            _found(run, "no-post-during-a-retry-after",
                   f"a request to {destination} {run.basecamp.rate_limited_for():g} s before a 429's Retry-After ends")
        if not mine:
            _found(run, "outbox-3 no request without a sending row",
                   f"a request to {destination} with no intent sending there with its words")
            return -1
        if not fresh:
            _found(run, "outbox-4 nothing sending is sent again",
                   f"intent {mine[0][0]} requested a second time in one era")
            return mine[0][0]
        identifier, kind, event_id = fresh[0]
        if kind == "guard_ack":
            guards.requested(run, connection, identifier)
        if kind == "guard_ack" and event_id is not None:
            marks = {guard for (guard,) in connection.execute(
                "SELECT guard FROM task_events WHERE event_id = ?", (event_id,))}
            if marks & {"armed", "canceled"}:
                _found(run, "outbox-9 a guard is fired from its claim",
                       f"guard intent {identifier} requested while its task rows read {sorted(marks)}")
    truth.requested_in_era.add(identifier)
    return identifier


def alone(run: Run, intent_id: int, destination: Destination, body: str) -> bool:
    """No other intent has ``body``'s words at ``destination`` (``basecamp.Attribution``)."""
    with run.connector.ledger.read() as connection:
        return not any(
            _text(text) == _text(body)
            for (text,) in connection.execute(
                "SELECT body FROM outbox WHERE id <> ? AND message_kind = ? AND bucket_id = ? AND recording_id = ?",
                (intent_id, str(destination.kind), destination.bucket_id, destination.recording_id)))


# -- after every step ------------------------------------------------------------------------------

def after_step(run: Run, final: bool) -> list[tuple[str, str]]:
    """Every check, on what changed since the last step (the outbox whole when anything there moved)."""
    truth = run.truth
    seen = (len(run.basecamp.messages), len(run.workers.told_to_acknowledge))
    changes = (run.connector, run.connector.ledger._connection.total_changes)
    if not final and changes == truth.last_changes and seen == truth.last_seen:
        _judge_exposures(run)
        run.basecamp.listed.clear()
        return truth.violations
    truth.last_changes = changes
    with run.connector.ledger.read() as connection:
        audit = connection.execute(
            "SELECT seq, tbl, key, old, new, note, old_receipt, new_receipt, cause, due, at, new_note FROM sim_audit"
            " WHERE seq > ? ORDER BY seq", (truth.audit_seen,)).fetchall()
        tables = {row[1] for row in audit}
        outbox_moved = final or "outbox" in tables or seen != truth.last_seen
        rows = connection.execute(_OUTBOX).fetchall() if outbox_moved else []
        events = dict(connection.execute("SELECT id, state FROM events").fetchall()) if final else {}
        gaps = connection.execute("SELECT after_id, resumed_after_id FROM gaps").fetchall() if final else []
        lanes = dict(connection.execute("SELECT id, lane FROM events").fetchall()) if final else {}
        untried = ([event_id for (event_id,) in connection.execute(
            "SELECT id FROM events WHERE state = 'blocked' AND reason = 'read_unauthorized'"
            " AND next_retry_at IS NULL")] if final else [])
        live = ([a for (a,) in connection.execute("SELECT id FROM attempts WHERE state <> 'ended'")]
                if final or "attempts" in tables else None)
    truth.last_seen = seen
    if live is not None:
        alive = {worker.attempt_id for worker in run.workers.alive.values()}
        for attempt_id in sorted(alive - set(live)):
            _found(run, "no-live-worker-settled", f"attempt {attempt_id} ended while its worker still runs")
    decided: list[tuple[int, str, int | None, int]] = []
    written: dict[int, int] = {}  # intent -> the audit row that wrote it, in this step
    for seq, table, key, old, new, note, old_receipt, new_receipt, cause, due, at, new_note in audit:
        truth.audit_seen = seq
        if table == "adopted":
            rules.reply_adopted(run, key, int(new))
            continue
        _judge_move(run, table, key, old, new, note or "", old_receipt, new_receipt, cause)
        if table != "outbox":
            continue
        if old is None:
            written[int(key)] = seq
            rules.written(run, key, (cause or ":").partition(":")[0], due, at)
        elif new == "indeterminate" and (new_note or "").startswith("listing failed"):
            run.cover("reconciliation gave up after ten failed listings")
        elif (old, new) == ("sending", "pending") and note in notes.NOT_CREATED_NOTES:
            rules.retried(run, key, note, due)
        elif (old, new) == ("sending", "canceled") and (new_note or "") in notes.GIVEN_UP_NOTES:
            rules.retried(run, key, new_note or "", None)
            token_outage.given_up(run, key, new_note or "")
        elif rules.decided_by_a_listing(old, new, new_note or "", not isinstance(
                truth.era_outcome.get(int(key)), Created)):
            decided.append((int(key), new, new_receipt, seq))
    if outbox_moved:
        _judge_outbox(run, rows)
        rules.reconciled(run, decided, rows, written)
    run.basecamp.listed.clear()
    _judge_exposures(run)
    if outbox_moved:
        words.judge(run, final)
    if outbox_moved or "guard" in tables:
        guards.judge(run)
    if final:
        _judge_end(run, rows, events, live or [])
        truth.violations += last_word.judge(run)
        truth.violations += words.judge_last_word(run)
        _judge_feed(run, events, gaps)
        inbox.judge(run, events, lanes, gaps)
        token_outage.blocked_for_good(run, untried)
    return truth.violations


def _judge_move(  # noqa: PLR0917 -- one audit row, as its columns
    run: Run, table: str, key: str, old: str | None, new: str, note: str,
                old_receipt: int | None, new_receipt: int | None, cause: str | None) -> None:
    if old is None:  # an intent written
        kind, _, state = (cause or ":").partition(":")
        expected = "ended" if kind == "completion" else None
        wrong = (state in ("", "seen") if kind in ("guard_ack", "holding_reply")
                 else state in ("", "admitted") if kind.startswith("worker_")  # a worker's call on what it pulled
                 else (state != "ended") if expected else state in ("", "ended"))
        if wrong:
            _found(run, "outbox-1 intent written with its transition",
                   f"intent {key} ({kind}) written while its cause reads {state or 'nothing'}")
        if new != "pending":
            _found(run, "outbox-7 intent states move along their edges, a person's only by a person",
                   f"intent {key} written {new}")
        return
    if table == "outbox" and old_receipt is not None and new_receipt != old_receipt:
        _found(run, "outbox-6 a receipt belongs to one intent, never changes",
               f"intent {key}'s receipt changed {old_receipt} -> {new_receipt}")
    if old == new:
        return
    actors = run.actors
    if table == "events" and run.truth.redispatched[int(key)]:
        actors = actors | {Actor.person}  # a person's redispatch of a live task moves it when the task ends
    if not _an_edge(table, old, new, actors, note):
        name = ("outbox-7 intent states move along their edges, a person's only by a person"
                if table == "outbox" else "moves-are-edges")
        _found(run, name, f"{table} {key} moved {old} -> {new} as one of {sorted(run.actors)}")
    if table == "outbox" and new == "sent":
        outcome = run.truth.era_outcome.get(int(key))
        adopted = not isinstance(outcome, Created)
        run.cover("intent adopted by reconciliation" if adopted and old == "sending" else f"intent sent from {old}")
        own = set(run.basecamp.by_maker.get(f"intent:{key}", []))
        if new_receipt not in own and not (old == "indeterminate" and Actor.person in run.actors):
            _found(run, "outbox-5 adoption only of its own message",
                   f"intent {key} recorded sent with message {new_receipt}, not made by its request ({sorted(own)})")
    if table == "outbox" and new in ("indeterminate", "canceled", "abandoned"):
        run.cover(f"intent {old} -> {new}" + (" (refused)" if new == "canceled" and old == "sending" else ""))
    if table == "events" and old == "seen" and new in ("admitted", "queued"):
        run.cover(f"admitted: {run.basecamp.kind_of(int(key))}")
    if table == "guard" and old == "armed" and new == "canceled":
        run.cover("guard armed, then canceled by get_dispatch")
    if table == "outbox" and (old, new, note) == ("pending", "canceled", notes.RESOLVED_RESEND):
        _cover_resent_guard(run, int(key))


def _cover_resent_guard(run: Run, intent_id: int) -> None:
    """A resent guard canceled at its claim because a worker pulled its instruction and has not
    acknowledged it (``core.message_kinds``' canceled guard, alone deciding)."""
    with run.connector.ledger.read() as connection:
        rows = connection.execute(
            "SELECT t.guard, t.delivery, e.state FROM outbox o JOIN events e ON e.id = o.event_id"
            " JOIN task_events t ON t.event_id = o.event_id WHERE o.id = ? AND o.kind = 'guard_ack'",
            (intent_id,)).fetchall()
    if (any(guard == "canceled" for guard, _, _ in rows)
            and not any(delivery in ("delivered", "completed") for _, delivery, _ in rows)
            and all(state in ("admitted", "queued", "dispatched") for _, _, state in rows)):
        run.cover("claim: a resent guard canceled, its instruction pulled and unacknowledged")


@lru_cache(maxsize=4096)
def _an_edge(table: str, old: str, new: str, actors: frozenset[Actor], note: str) -> bool:
    """Whether one of ``actors`` may move a row of ``table`` from ``old`` to ``new`` (core.edges is
    pure: a question asked again is answered from memory)."""
    edges, states = _TABLES[table]
    return any(isinstance(edges.step(states(old), states(new), actor, note), Success) for actor in actors)


@lru_cache(maxsize=4096)
def _text(body: str) -> str:
    """``message_text`` of a body (pure: a body seen again is answered from memory)."""
    return message_text(body)


def _judge_outbox(run: Run, rows: list[tuple[Any, ...]]) -> None:
    truth = run.truth
    keys: Counter[tuple[object, ...]] = Counter()
    receipts: Counter[tuple[str, int]] = Counter()
    texts = run.basecamp.texts
    makers = run.basecamp.by_maker
    for (identifier, kind, state, note, receipt, message_kind, _b, _r, body, event_id, attempt_id, occurrence,
         failures, _n, _s) in rows:
        if not kind.startswith("worker_"):  # a worker's words: words.judge counts them per call
            keys[(kind, event_id if kind in ("guard_ack", "holding_reply") else attempt_id,
                  occurrence if kind == "still_running" else 0)] += 1
        if receipt is not None:
            receipts[(message_kind, receipt)] += 1
        made = makers.get(f"intent:{identifier}", [])
        if len(made) > 1:
            _found(run, "no-message-doubled", f"intent {identifier} ({kind}) has {len(made)} messages: {made}")
        if state == "sending" and failures >= MAX_RECONCILE_FAILURES:
            _found(run, "outbox-10 reconciliation gives up after ten failures",
                   f"intent {identifier} still sending after {failures} failed listings")
        if state == "sent" and texts.get(receipt) != _text(body):
            _found(run, "receipts-unique-and-final",
                   f"intent {identifier}'s receipt {receipt} is not a message with its words")
        if state == "canceled" and note == notes.REFUSED_NOTE and not _refused(truth.era_outcome.get(identifier)):
            _found(run, "outbox-7 intent states move along their edges, a person's only by a person",
                   f"intent {identifier} carries the refused note, unrefused")
        if _refused(truth.era_outcome.get(identifier)) and state != "canceled":
            _found(run, "outbox-7 intent states move along their edges, a person's only by a person",
                   f"intent {identifier}'s request was refused, yet it is {state}")
        if kind == "guard_ack" and event_id in run.workers.told_to_acknowledge and made:
            _found(run, "outbox-8 a worker told to acknowledge never also gets the guard",
                   f"event {event_id}'s worker was told to acknowledge, and guard intent {identifier} posted")
    for key, count in keys.items():
        if count > 1:
            _found(run, "outbox-2 one intent per thing", f"{count} intents for {key}")
    for (kind, receipt), count in receipts.items():
        if count > 1:
            _found(run, "outbox-6 a receipt belongs to one intent, never changes", f"{kind} {receipt} owned {count} times")


def _refused(outcome: object) -> bool:
    """Basecamp refused the message itself (a 4xx other than 408 and 429): canceled, for a person.
    A refusal that proves only that nothing was created is retried (``core.posting``)."""
    return isinstance(outcome, Refused) and not_created_cause(outcome) is None


def hold_stands(run: Run) -> bool:
    with run.connector.ledger.read() as connection:
        return connection.execute("SELECT 1 FROM hold_marker").fetchone() is not None


def _judge_exposures(run: Run) -> None:
    for attempt_id, event_id in run.workers.pulled_under_hold:
        _found(run, "no-first-pull-under-a-hold", f"attempt {attempt_id} was handed event {event_id} under the hold")
    run.workers.pulled_under_hold.clear()
    handed = (sum(map(len, run.workers.handed.values())), run.truth.redispatched.total())
    if handed == run.truth.handed_seen:  # both only grow: nothing handed, nothing redispatched since
        return
    run.truth.handed_seen = handed
    for event_id, attempts in run.workers.handed.items():
        allowed = 1 + run.truth.redispatched[event_id]
        if len(set(attempts)) > allowed:
            _found(run, "no-instruction-twice",
                   f"event {event_id}'s instruction handed to {len(set(attempts))} workers"
                   f" ({run.truth.redispatched[event_id]} redispatches)")


def _judge_end(run: Run, rows: list[tuple[Any, ...]], events: dict[int, str], live: list[str]) -> None:
    now = run.clock.now()
    from core.timestamps import parse_timestamp

    for identifier, kind, state, note, *_rest, not_before, _sending_at in rows:
        if state == "sending":
            _found(run, "nothing-sending-at-quiescence", f"intent {identifier} ({kind}) stays sending")
        if state == "pending" and parse_timestamp(not_before) <= now:
            _found(run, "nothing-sending-at-quiescence", f"intent {identifier} ({kind}) is due and unsent")
        if state in ("indeterminate", "abandoned", "canceled") and not note:
            _found(run, "no-record-lost", f"intent {identifier} is {state} without a note")
    waiting = {event_id for event_id, state in events.items() if state in ("seen", "admitted", "queued", "dispatched")}
    held = set(run.connector.held)
    orphans = {worker.attempt_id for worker in run.workers.alive.values() if not worker.supervised}
    for attempt_id in sorted(set(live) - held - orphans):
        _found(run, "no-record-lost", f"attempt {attempt_id} left live: neither settled nor held for a person")
    if waiting and not held:
        _found(run, "no-record-lost", f"records {sorted(waiting)} neither answered, notified nor held for a person")
    for event_id in waiting:
        if events[event_id] == "seen":
            _found(run, "no-record-lost", f"record {event_id} was never admitted")


def _judge_feed(run: Run, events: dict[int, str], gaps: list[tuple[int, int]]) -> None:
    """Every mention Basecamp's feed held is a record, or was expired unread inside a gap the
    poll lane recorded from the feed's 410."""
    for mention in run.basecamp.feed:
        if mention.event_id in events:
            continue
        if any(after < mention.event_id <= resumed for after, resumed in gaps):
            run.cover("410: an event expired unread, inside a recorded gap")
            continue
        _found(run, "no-event-missed", f"event {mention.event_id} is neither a record nor inside a recorded gap")


def busy(run: Run) -> bool:
    with run.connector.ledger.read() as connection:
        (count,) = connection.execute(
            "SELECT COUNT(*) FROM outbox WHERE state = 'sending' OR (state = 'pending' AND not_before <= ?)",
            (run.connector.ledger.timestamp(),)).fetchone()
        (moving,) = connection.execute(
            "SELECT COUNT(*) FROM events WHERE state IN ('seen', 'admitted', 'queued')").fetchone()
        (held,) = connection.execute("SELECT COUNT(*) FROM attempts WHERE state <> 'ended'").fetchone()
    working = any(worker.supervised for worker in run.workers.alive.values())
    return bool(count or (moving and not held) or working or run.connector.dispatcher.pending)
