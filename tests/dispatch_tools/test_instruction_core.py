"""core.dispatch_tools and core.mentions with plain values: which row get_dispatch serves and what it writes, the
acknowledgement and the report, the arguments, and the agent's own mention stripped."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from core.dispatch_tools import MAX_LINK_LENGTH, MAX_LINKS, RefusalKind
from core.dispatch_tools.decisions import (
    Acknowledge,
    AckRequest,
    Complete,
    CompleteRequest,
    Completion,
    GetRequest,
    NothingWaiting,
    Report,
    Serve,
    check_completion,
    decide_ack,
    decide_complete,
    decide_get,
    is_http_url,
    read_ack_arguments,
    read_complete_arguments,
    read_get_arguments,
)
from core.dispatch_tools.instruction import (
    DispatchRow,
    InstructionRecord,
    build_instruction,
    receipt_of,
    servable,
)
from core.edges import DeliveryState, GuardState, RecordState
from core.mentions import mentioned_person_ids, person_id_from_sgid, strip_mentions_of
from core.states import EventOutcome
from shell.basecamp.standin.world import person_sgid

AGENT = 42
SNAPSHOT = json.dumps(
    {"type": "Kanban::Card", "title": "T", "app_url": "https://x/1", "content": "<div>hi</div>",
     "updated_at": "2026-11-29T11:59:00Z"}
)


def record(event_id: int = 1, state: RecordState = RecordState.dispatched, snapshot: str | None = SNAPSHOT) -> InstructionRecord:
    return InstructionRecord(
        event_id=event_id, state=state, event_type="comment.created", trigger="mentioned", bucket_id=10,
        recording_id=20, recording_type="", recording_url="", reply_kind="comment", reply_recording_id=20,
        requester_id=7, acknowledge=True, snapshot=snapshot,
    )


def row(
    event_id: int = 1,
    delivery: DeliveryState = DeliveryState.admitted,
    guard: GuardState = GuardState.armed,
    pulled: bool = False,
    state: RecordState = RecordState.dispatched,
    **fields: object,
) -> DispatchRow:
    return DispatchRow(record(event_id, state), delivery, guard, pulled, **fields)  # type: ignore[arg-type]


def refusal(result: object) -> RefusalKind:
    assert isinstance(result, Failure), result
    return result.failure().kind  # type: ignore[no-any-return]


def success(result: object) -> object:
    assert isinstance(result, Success), result
    return result.unwrap()


# -- get_dispatch ------------------------------------------------------------------------------


def test_a_first_get_exposes_pulls_and_cancels_the_guard() -> None:
    assert success(decide_get([row()], 1)) == Serve(1, expose=True, pull=True, cancel_guard=True)


def test_a_pull_of_a_launch_exposure_records_the_pull_only() -> None:
    launched = row(delivery=DeliveryState.exposed)
    assert success(decide_get([launched], None)) == Serve(1, expose=False, pull=True, cancel_guard=True)


@pytest.mark.parametrize("guard", [GuardState.canceled, GuardState.fired, GuardState.unarmed])
@pytest.mark.parametrize("delivery", [DeliveryState.exposed, DeliveryState.delivered, DeliveryState.completed])
def test_a_repeat_writes_nothing(delivery: DeliveryState, guard: GuardState) -> None:
    decision = success(decide_get([row(delivery=delivery, guard=guard, pulled=True)], 1))
    assert isinstance(decision, Serve)
    assert not decision.writes


def test_the_earliest_waiting_servable_row_is_served() -> None:
    rows = [
        row(5),
        row(2, DeliveryState.delivered, GuardState.canceled, pulled=True),
        row(3, state=RecordState.completed),  # finished elsewhere, never pulled
        row(4, DeliveryState.exposed, GuardState.canceled, pulled=True),
    ]
    assert success(decide_get(rows, None)) == Serve(4, expose=False, pull=False, cancel_guard=False)


def test_nothing_waiting() -> None:
    assert success(decide_get([], None)) == NothingWaiting()
    done = row(1, DeliveryState.completed, GuardState.canceled, pulled=True, state=RecordState.completed)
    assert success(decide_get([done], None)) == NothingWaiting()


def test_a_named_event_not_on_the_task_and_one_not_servable() -> None:
    assert refusal(decide_get([row(1)], 2)) == RefusalKind.not_on_task
    assert refusal(decide_get([row(1, state=RecordState.completed)], 1)) == RefusalKind.not_dispatchable
    without = DispatchRow(record(snapshot=None), DeliveryState.admitted, GuardState.armed, False)
    assert refusal(decide_get([without], 1)) == RefusalKind.not_dispatchable
    unreadable = DispatchRow(record(snapshot="[1, 2]"), DeliveryState.admitted, GuardState.armed, False)
    assert refusal(decide_get([unreadable], 1)) == RefusalKind.not_dispatchable


def test_under_a_hold_only_a_repeat_is_served() -> None:
    assert refusal(decide_get([row()], 1, held=True)) == RefusalKind.not_dispatchable
    assert refusal(decide_get([row(delivery=DeliveryState.exposed)], 1, held=True)) == RefusalKind.not_dispatchable
    repeat = row(delivery=DeliveryState.exposed, guard=GuardState.canceled, pulled=True)
    assert isinstance(success(decide_get([repeat], 1, held=True)), Serve)


deliveries = st.sampled_from(list(DeliveryState))
guards = st.sampled_from(list(GuardState))
states = st.sampled_from(list(RecordState))
snapshots = st.sampled_from([SNAPSHOT, None, "", "not json", "[]"])


@st.composite
def dispatch_rows(draw: st.DrawFn) -> list[DispatchRow]:
    ids = draw(st.lists(st.integers(1, 50), unique=True, max_size=6))
    return [
        DispatchRow(
            record(event_id, draw(states), draw(snapshots)), draw(deliveries), draw(guards), draw(st.booleans())
        )
        for event_id in ids
    ]


@settings(max_examples=150)
@given(dispatch_rows(), st.one_of(st.none(), st.integers(1, 50)), st.booleans())
def test_get_never_serves_what_it_may_not_and_writes_only_forward(
    rows: list[DispatchRow], event_id: int | None, held: bool
) -> None:
    match decide_get(rows, event_id, held=held):
        case Success(Serve() as serve):
            served = next(r for r in rows if r.event_id == serve.event_id)
            assert servable(served)
            assert served.record.state == RecordState.dispatched or served.pulled, "finished work handed out"
            assert serve.expose == (served.delivery == DeliveryState.admitted)
            assert serve.pull == (not served.pulled)
            assert serve.cancel_guard == (served.guard == GuardState.armed)
            assert not (held and (serve.expose or serve.pull))
            if event_id is None:
                waiting = [r.event_id for r in rows if r.delivery in ("admitted", "exposed") and servable(r)]
                assert serve.event_id == min(waiting)
        case Success(NothingWaiting()):
            assert event_id is None
            assert not [r for r in rows if r.delivery in ("admitted", "exposed") and servable(r)]
        case Failure(refused):
            assert refused.kind in (RefusalKind.not_on_task, RefusalKind.not_dispatchable)
            if refused.kind == RefusalKind.not_on_task:
                assert event_id not in [r.event_id for r in rows]


def test_guard_acknowledged_is_the_guard_having_fired() -> None:
    for guard in GuardState:
        instruction = build_instruction(row(guard=guard, pulled=True, delivery=DeliveryState.exposed), AGENT)
        assert instruction is not None
        assert instruction.guard_acknowledged == (guard == GuardState.fired)


def test_the_instruction_takes_type_and_url_from_the_record_and_falls_back_to_the_snapshot() -> None:
    plain = build_instruction(row(), AGENT)
    assert plain is not None
    assert (plain.recording_type, plain.recording_url, plain.recording_title) == ("Kanban::Card", "https://x/1", "T")
    assert plain.content_updated_at == "2026-11-29T11:59:00Z"
    named = replace(row(), record=replace(record(), recording_type="Todo", recording_url="https://y/2"))
    built = build_instruction(named, AGENT)
    assert built is not None
    assert (built.recording_type, built.recording_url) == ("Todo", "https://y/2")
    assert build_instruction(DispatchRow(record(snapshot=None), DeliveryState.exposed, GuardState.armed, True), AGENT) is None


# -- ack_dispatch ------------------------------------------------------------------------------

PULLED = row(delivery=DeliveryState.exposed, guard=GuardState.canceled, pulled=True)


def test_ack_decisions() -> None:
    assert refusal(decide_ack(None, 1)) == RefusalKind.not_on_task
    assert refusal(decide_ack(row(delivery=DeliveryState.exposed), 1)) == RefusalKind.not_exposed
    assert success(decide_ack(PULLED, 9)) == Acknowledge(write=True, ack_id=9)
    assert success(decide_ack(PULLED, None)) == Acknowledge(write=True, ack_id=None)
    delivered = replace(PULLED, delivery=DeliveryState.delivered, ack_id=9)
    assert success(decide_ack(delivered, 9)) == Acknowledge(write=False, ack_id=None)
    assert success(decide_ack(delivered, None)) == Acknowledge(write=False, ack_id=None)
    assert refusal(decide_ack(delivered, 10)) == RefusalKind.report_conflict
    bare = replace(PULLED, delivery=DeliveryState.delivered)
    assert refusal(decide_ack(bare, 9)) == RefusalKind.report_conflict
    completed = replace(PULLED, delivery=DeliveryState.completed, outcome=EventOutcome.succeeded)
    assert success(decide_ack(completed, None)) == Acknowledge(write=False, ack_id=None)


@given(deliveries, st.one_of(st.none(), st.integers(1, 3)), st.one_of(st.none(), st.integers(1, 3)), st.booleans())
def test_an_ack_id_is_written_with_the_move_to_delivered_or_never(
    delivery: DeliveryState, stored: int | None, given_id: int | None, pulled: bool
) -> None:
    assume(stored is None or delivery in (DeliveryState.delivered, DeliveryState.completed))  # the id comes with the move
    current = replace(PULLED, delivery=delivery, ack_id=stored, pulled=pulled)
    match decide_ack(current, given_id):
        case Success(Acknowledge(write=True, ack_id=ack_id)):
            assert pulled
            assert delivery == DeliveryState.exposed
            assert stored is None
            assert ack_id == given_id
        case Success(Acknowledge(write=False)):
            assert pulled
            assert delivery != DeliveryState.exposed
            assert given_id is None or given_id == stored
        case Failure(refused):
            assert refused.kind in (RefusalKind.not_exposed, RefusalKind.report_conflict)


# -- complete_dispatch -------------------------------------------------------------------------


def test_complete_decisions() -> None:
    report = Completion("succeeded", 77, ("https://example.com/pr/1",))
    assert refusal(decide_complete(None, report)) == RefusalKind.not_on_task
    assert refusal(decide_complete(row(delivery=DeliveryState.exposed), report)) == RefusalKind.not_exposed
    expected = Report(EventOutcome.succeeded, 77, ("https://example.com/pr/1",))
    assert success(decide_complete(PULLED, report)) == Complete(True, expected, complete_record=True)
    delivered = replace(PULLED, delivery=DeliveryState.delivered, ack_id=4)
    assert success(decide_complete(delivered, report)) == Complete(True, expected, complete_record=True)
    elsewhere = replace(PULLED, record=replace(PULLED.record, state=RecordState.completed))
    assert success(decide_complete(elsewhere, report)) == Complete(True, expected, complete_record=False)
    done = replace(PULLED, delivery=DeliveryState.completed, outcome=EventOutcome.succeeded, reply_id=77,
                   links=("https://example.com/pr/1",))
    assert success(decide_complete(done, report)) == Complete(False, expected, complete_record=False)
    assert refusal(decide_complete(done, replace(report, outcome="failed"))) == RefusalKind.report_conflict
    unknown = replace(done, outcome=EventOutcome.unknown)
    assert refusal(decide_complete(unknown, report)) == RefusalKind.report_conflict


def test_the_report_is_checked_after_the_pull() -> None:
    assert refusal(decide_complete(row(), Completion("nonsense"))) == RefusalKind.not_exposed
    assert refusal(decide_complete(PULLED, Completion("nonsense"))) == RefusalKind.invalid_report


@pytest.mark.parametrize(
    ("links", "valid"),
    [
        ((), True),
        (("https://github.com/acme/app/pull/12",), True),
        (("http://localhost:8080/x?y=1#z",), True),
        (tuple(f"https://e.com/{n}" for n in range(MAX_LINKS)), True),
        (tuple(f"https://e.com/{n}" for n in range(MAX_LINKS + 1)), False),
        (("https://e.com/" + "a" * (MAX_LINK_LENGTH - len("https://e.com/")),), True),
        (("https://e.com/" + "a" * (MAX_LINK_LENGTH - len("https://e.com/") + 1),), False),
        (("ftp://e.com/x",), False),
        (("javascript:alert(1)",), False),
        (("https://",), False),
        (("/relative/path",), False),
        (("https://e.com/a b",), False),
        ((" https://e.com/",), False),
        (("https://e.com/\n",), False),
        (("https://[::1/",), False),
    ],
)
def test_links(links: tuple[str, ...], valid: bool) -> None:
    result = check_completion(Completion("failed", None, links))
    assert isinstance(result, Success) == valid, result


@given(st.text(max_size=60))
def test_is_http_url_accepts_only_http_urls_with_a_host(text: str) -> None:
    if is_http_url(text):
        assert text.startswith(("http://", "https://"))
        assert not any(character.isspace() for character in text)


reports = st.tuples(
    st.sampled_from(["succeeded", "failed"]),
    st.one_of(st.none(), st.integers(1, 5)),
    st.lists(st.sampled_from(["https://a.example/1", "https://a.example/2", "http://b.example/"]), max_size=3),
)


@settings(max_examples=100)
@given(reports, reports)
def test_a_reported_outcome_stands_whatever_comes_after(
    first: tuple[str, int | None, list[str]], second: tuple[str, int | None, list[str]]
) -> None:
    outcome, reply_id, links = first
    other_outcome, other_reply, other_links = second
    done = replace(
        PULLED, delivery=DeliveryState.completed, outcome=EventOutcome(outcome), reply_id=reply_id, links=tuple(links)
    )
    again = Completion(other_outcome, other_reply, tuple(other_links))
    same = (outcome, reply_id, links) == (other_outcome, other_reply, other_links)
    match decide_complete(done, again):
        case Success(Complete(write=False)):
            assert same
        case Failure(refused):
            assert not same
            assert refused.kind == RefusalKind.report_conflict
        case other:
            pytest.fail(f"a completed row was written again: {other}")


def test_receipts_leave_out_what_is_absent() -> None:
    assert receipt_of(PULLED).to_json() == {"event_id": 1, "delivery": "exposed"}
    full = replace(PULLED, delivery=DeliveryState.completed, ack_id=3, outcome=EventOutcome.failed, reply_id=4,
                   links=("https://e.com/",))
    assert receipt_of(full).to_json() == {
        "event_id": 1, "delivery": "completed", "ack_id": 3, "outcome": "failed", "reply_id": 4,
        "links": ["https://e.com/"],
    }


# -- arguments ---------------------------------------------------------------------------------


def test_arguments() -> None:
    assert success(read_get_arguments({})) == GetRequest(None)
    assert success(read_get_arguments({"event_id": 12})) == GetRequest(12)
    assert success(read_get_arguments({"event_id": None})) == GetRequest(None)
    assert success(read_get_arguments({"event_id": 12.0})) == GetRequest(12)
    assert success(read_get_arguments({"event_id": "12"})) == GetRequest(12)
    for bad in (0, -1, True, 1.5, "x", [], {}, 2**63):
        assert refusal(read_get_arguments({"event_id": bad})) == RefusalKind.invalid_arguments
    assert refusal(read_get_arguments({"event": 1})) == RefusalKind.invalid_arguments
    assert success(read_ack_arguments({"event_id": 1, "ack_id": 2})) == AckRequest(1, 2)
    assert success(read_ack_arguments({"event_id": 1})) == AckRequest(1, None)
    assert refusal(read_ack_arguments({"ack_id": 2})) == RefusalKind.invalid_arguments
    assert success(read_complete_arguments({"event_id": 1, "outcome": "failed"})) == CompleteRequest(
        1, Completion("failed")
    )
    assert success(
        read_complete_arguments({"event_id": 1, "outcome": "succeeded", "reply_id": 3, "links": ["https://e.com"]})
    ) == CompleteRequest(1, Completion("succeeded", 3, ("https://e.com",)))
    assert refusal(read_complete_arguments({"event_id": 1})) == RefusalKind.invalid_arguments
    assert refusal(read_complete_arguments({"event_id": 1, "outcome": "failed", "links": "https://e.com"})) == (
        RefusalKind.invalid_arguments
    )
    assert refusal(read_complete_arguments({"event_id": 1, "outcome": "failed", "links": [1]})) == (
        RefusalKind.invalid_arguments
    )
    # the outcome's value is the report's to judge, after the token and the pull
    assert success(read_complete_arguments({"event_id": 1, "outcome": "done"})) == CompleteRequest(
        1, Completion("done")
    )


# -- mentions ----------------------------------------------------------------------------------


def mention(person_id: int, closing: str = "full") -> str:
    sgid = person_sgid(person_id)
    match closing:
        case "self":
            return f'<bc-attachment sgid="{sgid}" content-type="application/vnd.basecamp.mention"/>'
        case "empty":
            return f'<bc-attachment sgid="{sgid}"></bc-attachment>'
    return (
        f'<bc-attachment sgid="{sgid}" content-type="application/vnd.basecamp.mention">'
        f'<figure><img src="https://x/a.png" class="avatar"><figcaption>P{person_id}</figcaption></figure>'
        "</bc-attachment>"
    )


def test_person_ids_from_sgids() -> None:
    assert person_id_from_sgid(person_sgid(1049715916)) == 1049715916
    assert person_id_from_sgid("") is None
    assert person_id_from_sgid("BAh7CEkiCG--abc") is None
    assert person_id_from_sgid("not base64 at all!--x") is None


def test_the_agents_mention_is_stripped_and_others_kept() -> None:
    text = f"<div>{mention(AGENT)} can you ask {mention(7, 'empty')} and {mention(AGENT, 'self')}?</div>"
    stripped = strip_mentions_of(text, AGENT)
    assert stripped == f"<div>  can you ask {mention(7, 'empty')} and  ?</div>"
    assert mentioned_person_ids(stripped) == (7,)
    assert strip_mentions_of("<div>no one</div>", AGENT) == "<div>no one</div>"


def test_an_unclosed_mention_takes_only_its_start_tag() -> None:
    sgid = person_sgid(AGENT)
    text = f'<div><bc-attachment sgid="{sgid}">the request itself</div>'
    assert strip_mentions_of(text, AGENT) == "<div> the request itself</div>"
    before_another = f'<bc-attachment sgid="{sgid}">x{mention(7)}'
    assert strip_mentions_of(before_another, AGENT) == f" x{mention(7)}"


def test_entities_and_the_first_sgid_decide() -> None:
    sgid = person_sgid(AGENT).replace("=", "&#x3D;")
    assert mentioned_person_ids(f'<bc-attachment sgid="{sgid}"></bc-attachment>') == (AGENT,)
    first_wins = f'<bc-attachment sgid="" sgid="{person_sgid(AGENT)}"></bc-attachment>'
    assert mentioned_person_ids(first_wins) == ()
    in_a_comment = f"<!-- {mention(AGENT)} -->"
    assert mentioned_person_ids(in_a_comment) == ()
    assert strip_mentions_of(in_a_comment, AGENT) == in_a_comment


pieces = st.one_of(
    st.sampled_from(["<div>", "</div>", " please ", "<br>", "a < b", "&amp;", "<strong>x</strong>", "\n", "<"]),
    st.text(alphabet=st.characters(blacklist_characters="<>"), max_size=8),
    st.builds(mention, st.sampled_from([AGENT, 7, 8]), st.sampled_from(["full", "self", "empty"])),
)


@settings(max_examples=120)
@given(st.lists(pieces, max_size=12))
def test_stripping_leaves_no_mention_of_the_agent_and_every_other(parts: list[str]) -> None:
    text = "".join(parts)
    stripped = strip_mentions_of(text, AGENT)
    assert AGENT not in mentioned_person_ids(stripped)
    others = [person for person in mentioned_person_ids(text) if person != AGENT]
    assert [person for person in mentioned_person_ids(stripped) if person != AGENT] == others
    if AGENT not in mentioned_person_ids(text):
        assert stripped == text


@settings(max_examples=120)
@given(st.lists(st.sampled_from([*'<>/="\' -!?abcdefgimnt', "bc-attachment", "sgid=", person_sgid(AGENT)]), max_size=40))
def test_hostile_markup_never_keeps_the_agents_mention(parts: list[str]) -> None:
    text = "".join(parts)
    assert AGENT not in mentioned_person_ids(strip_mentions_of(text, AGENT))
