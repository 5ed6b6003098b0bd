"""shell.demo.script's narration: what the demo tells from two looks at the ledger, with plain values."""

from __future__ import annotations

from core import notes
from shell.demo.script import EventView, IntentView, abbreviate, narrate, quote, settled

GUARD = IntentView(1, "guard_ack", "pending", words="👀 received")


def test_nothing_changed_tells_nothing() -> None:
    view = EventView(state="admitted", intents=(GUARD,))
    assert narrate(view, view, "4s") == ()


def test_a_verdict_and_its_armed_guard_are_told() -> None:
    lines = narrate(EventView(), EventView(state="admitted", trigger="mentioned", intents=(GUARD,)), "4s")
    assert lines == (
        "verdict: admitted (mentioned)",
        "guard armed: a '👀 received' boost is due in 4s unless the worker acknowledges first",
    )


def test_a_worker_told_in_the_order_things_happen_to_it() -> None:
    before = EventView(state="dispatched", task_id=1, attempt_state="running", intents=(GUARD,))
    after = EventView(
        state="completed", task_id=1, pulled=True, ack_id=8, outcome="succeeded", reply_id=9,
        attempt_state="ended", stop_reason="finished",
        intents=(IntentView(1, "guard_ack", "canceled", note=notes.CANCELED_BY_GET_DISPATCH),),
    )  # fmt: skip
    assert narrate(before, after, "4s") == (
        "the worker pulled its instruction (get_dispatch)",
        "guard boost stood down: the worker pulled its instruction first",
        "the event records the worker's acknowledgement, message 8",
        "the worker reported 'succeeded' with its reply, message 9 (complete_dispatch)",
        "the record is completed",
        "the worker's attempt ended: finished",
    )


def test_a_worker_that_pulls_after_the_guard_spoke_is_told_it_will_not_acknowledge_again() -> None:
    sent = IntentView(1, "guard_ack", "sent", receipt_id=11, words="👀 received")
    lines = narrate(EventView(state="dispatched", intents=(sent,)),
                    EventView(state="dispatched", pulled=True, intents=(sent,)), "4s")  # fmt: skip
    assert lines == (
        "the worker pulled its instruction (get_dispatch): guard_acknowledged, so it will not acknowledge again",
    )


def test_a_completion_notice_is_told_after_the_attempts_end_and_quoted_whole() -> None:
    words = "Task 3 ended: the worker failed. Event 7: failed. Needs a person: bin/connect redispatch 7"
    notice = IntentView(2, "completion", "sent", receipt_id=17, words=words)
    lines = narrate(EventView(state="completed", task_id=3, attempt_state="running"),
                    EventView(state="completed", task_id=3, attempt_state="ended", stop_reason="failed",
                              intents=(notice,)), "4s")  # fmt: skip
    assert lines[0] == "the worker's attempt ended: failed"
    assert lines[1] == "completion notice written to the outbox"
    assert lines[2].startswith("completion notice posted, message 17:\n'Task 3 ended")
    assert "bin/connect redispatch 7'" in lines[2].replace("\n", " ")


def test_an_adopted_notice_says_it_was_not_posted_again() -> None:
    sending = IntentView(3, "holding_reply", "sending", words="I can't start on this here yet")
    adopted = IntentView(3, "holding_reply", "sent", receipt_id=19, note=notes.ADOPTED, words=sending.words)
    lines = narrate(EventView(state="blocked", intents=(sending,)),
                    EventView(state="blocked", intents=(adopted,)), "4s")  # fmt: skip
    assert lines == (
        "holding reply adopted by reconciliation: listing found it as message 19, so it is not posted again",
    )


def test_canceled_and_indeterminate_notices_say_their_notes() -> None:
    refused = IntentView(4, "completion", "canceled", note=notes.REFUSED_NOTE)
    unsure = IntentView(5, "holding_reply", "indeterminate", note="2 matching messages at the destination")
    told = narrate(EventView(state="completed"), EventView(state="completed", intents=(refused,)), "4s")
    assert told[-1] == f"completion notice canceled: {notes.REFUSED_NOTE}"
    assert narrate(EventView(state="blocked"), EventView(state="blocked", intents=(unsure,)), "4s")[-1] == (
        "holding reply indeterminate: 2 matching messages at the destination; a person decides "
        "(bin/outbox-resolve)"
    )


def test_a_scene_is_settled_only_when_its_record_attempt_and_notices_have_stopped_moving() -> None:
    done = IntentView(1, "guard_ack", "canceled")
    assert settled(EventView(state="completed", attempt_state="ended", intents=(done,)))
    assert settled(
        EventView(state="blocked", intents=(IntentView(2, "holding_reply", "sent", receipt_id=3),))
    )
    assert not settled(EventView())
    assert not settled(EventView(state="admitted"))
    assert not settled(EventView(state="dispatched", attempt_state="running"))
    assert not settled(EventView(state="completed", attempt_state="running", intents=(done,)))
    assert not settled(EventView(state="blocked", intents=(IntentView(2, "holding_reply", "sending"),)))
    assert not settled(EventView(state="completed", attempt_state="ended",
                                 intents=(IntentView(4, "completion", "pending"),)))  # fmt: skip


def test_words_are_abbreviated_on_one_line_and_quoted_whole_when_wrapped() -> None:
    assert abbreviate("a\n b   c") == "a b c"
    assert abbreviate("x" * 100, 10) == "x" * 9 + "…"
    long = " ".join(["word"] * 60)
    assert quote(long, 40).replace("\n", " ") == f"'{long}'"
    assert all(len(line) <= 40 for line in quote(long, 40).splitlines())


def test_a_notice_is_quoted_line_by_line_so_a_command_never_runs_into_the_next_words() -> None:
    from core.text import message_lines

    body = "<div>Needs a person: bin/connect redispatch 7<br>Event 7 · automatic notice</div>"
    quoted = quote("\n".join(message_lines(body)), 60)
    assert quoted.splitlines() == ["'Needs a person: bin/connect redispatch 7", "Event 7 · automatic notice'"]
