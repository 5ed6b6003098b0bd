"""What the demo says as a scene happens: the ledger's view of one event, before and after.

Rules:
1. The narration is read, never inferred: each line names a change between two read-only views
   of the ledger (``EventView``); what changed and was undone between two looks, or a state
   skipped over, is not told.
2. Lines come in the order things happen to an event: verdict, worker start, pull, guard or
   holding reply, acknowledgement, report, completion, the attempt's end, then its notices.
3. A notice is named by its kind's label; a sent one says whether posted or adopted, a canceled
   or indeterminate one its note. A posted notice is quoted whole (``quote``); other words are
   cut to ``WIDTH`` characters, on one line.
4. A scene is settled when its record has left the moving states (seen, admitted, queued,
   dispatched), its attempt has ended, and every notice of it is final."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from core import notes
from core.message_kinds import label

WIDTH = 72
MOVING_STATES = frozenset({"", "seen", "admitted", "queued", "dispatched"})
FINAL_INTENT_STATES = frozenset({"sent", "canceled", "indeterminate", "abandoned"})
AFTER_THE_WORKER = frozenset({"dispatched", "completed"})  # told after what the worker did
ATTEMPT_NOTICES = frozenset({"still_running", "completion"})  # told after the attempt's news
QUOTE_WIDTH = 88

@dataclass(frozen=True, slots=True)
class IntentView:
    """One outbox row of the event or its attempts."""

    id: int
    kind: str
    state: str
    receipt_id: int | None = None
    note: str = ""
    words: str = ""


@dataclass(frozen=True, slots=True)
class EventView:
    """What the ledger says of one event and the task it joined; empty before it is seen."""

    state: str = ""
    reason: str = ""
    trigger: str = ""
    task_id: int | None = None
    pulled: bool = False
    ack_id: int | None = None
    outcome: str = ""
    reply_id: int | None = None
    attempt_state: str = ""
    stop_reason: str = ""
    intents: tuple[IntentView, ...] = ()


def abbreviate(words: str, width: int = WIDTH) -> str:
    """One line of at most ``width`` characters, an ellipsis marking a cut."""
    line = " ".join(words.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def quote(words: str, width: int = QUOTE_WIDTH) -> str:
    """Message words in full, quoted and wrapped to ``width`` (a notice is told whole), each of
    its own lines (``\\n`` in ``words``) starting a line of its own."""
    lines = f"'{words}'".split("\n")
    return "\n".join(wrapped for line in lines for wrapped in textwrap.wrap(line, width)) or "''"


def settled(view: EventView) -> bool:
    """Rule 4."""
    return (
        view.state not in MOVING_STATES
        and view.attempt_state in ("", "ended")
        and all(intent.state in FINAL_INTENT_STATES for intent in view.intents)
    )


def narrate(before: EventView, after: EventView, guard_delay: str) -> tuple[str, ...]:
    """The lines that tell what changed from ``before`` to ``after`` (rules 1 to 3)."""
    lines: list[str] = []
    moved = after.state != before.state and after.state
    if moved and after.state not in AFTER_THE_WORKER:
        lines.append(_record(after))
    if after.task_id is not None and before.task_id is None:
        lines.append(f"the dispatcher started a worker (task {after.task_id})")
    if after.pulled and not before.pulled:
        guarded = any(intent.kind == "guard_ack" and intent.state == "sent" for intent in after.intents)
        lines.append(
            "the worker pulled its instruction (get_dispatch): guard_acknowledged, so it will not "
            "acknowledge again"
            if guarded
            else "the worker pulled its instruction (get_dispatch)"
        )
    earlier = {intent.id: intent for intent in before.intents}
    for intent in after.intents:
        if intent.kind not in ATTEMPT_NOTICES:
            lines.extend(_intent(earlier.get(intent.id), intent, guard_delay))
    if after.ack_id is not None and before.ack_id is None:
        lines.append(f"the event records the worker's acknowledgement, message {after.ack_id}")
    if after.outcome and not before.outcome:
        given = any(intent.kind == "worker_reply" for intent in after.intents)
        reply = (
            f"its reply, message {after.reply_id}" if after.reply_id is not None
            else "its reply, for the connector to post" if given
            else "no reply"
        )  # fmt: skip
        lines.append(f"the worker reported '{after.outcome}' with {reply} (complete_dispatch)")
    if moved and after.state in AFTER_THE_WORKER:
        lines.append(_record(after))
    if after.attempt_state == "ended" and before.attempt_state != "ended":
        lines.append(f"the worker's attempt ended: {after.stop_reason or 'stopped'}")
    for intent in after.intents:
        if intent.kind in ATTEMPT_NOTICES:
            lines.extend(_intent(earlier.get(intent.id), intent, guard_delay))
    return tuple(lines)


def _record(view: EventView) -> str:
    reason = f" ({view.reason})" if view.reason else ""
    match view.state:
        case "seen":
            return "the connector read the request from the event feed"
        case "admitted" | "queued" | "discarded":
            trigger = f" ({view.trigger})" if view.trigger and not view.reason else reason
            return f"verdict: {view.state}{trigger}"
        case "blocked":
            return f"verdict: blocked{reason}: the project has no route, so no worker runs"
        case "dispatched":
            return "the record is dispatched"
        case "completed":
            return "the record is completed"
        case _:
            return f"the record is {view.state}{reason}"


def _intent(before: IntentView | None, after: IntentView, guard_delay: str) -> list[str]:
    name = label(after.kind)
    lines: list[str] = []
    if before is None:
        if after.kind == "guard_ack":
            lines.append(
                f"guard armed: a '{after.words}' boost is due in {guard_delay} unless the worker "
                "acknowledges first"
            )
        else:
            lines.append(f"{name} written to the outbox")
    previous = before.state if before is not None else "pending"
    if after.state == previous:
        return lines
    match after.state:
        case "sending":
            lines.append(f"{name} claimed; its one POST is on its way")
        case "sent" if after.note == notes.ADOPTED:
            lines.append(
                f"{name} adopted by reconciliation: listing found it as message {after.receipt_id}, "
                "so it is not posted again"
            )
        case "sent":
            lines.append(f"{name} posted, message {after.receipt_id}:\n" + quote(after.words))
        case "canceled" if after.note == notes.CANCELED_BY_GET_DISPATCH:
            lines.append(f"{name} stood down: the worker pulled its instruction first")
        case "canceled":
            lines.append(f"{name} canceled: {after.note}")
        case "indeterminate":
            lines.append(f"{name} indeterminate: {after.note}; a person decides (bin/outbox-resolve)")
        case _:
            lines.append(f"{name} {after.state}")
    return lines
