"""The create: exactly one request whatever happens, classified into the outbox's closed set.

Each row of the outcome table is driven over real HTTP against the stand-in, and every test
counts the POSTs that reached it.
"""

import logging
import time
from datetime import UTC, datetime, timedelta

import pytest

from core.destinations import Destination, MessageKind
from core.posting import Created, RefusalCause, Refused, Uncertain, UncertainCause
from shell.basecamp.client import BasecampClient
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.clock import FakeClock
from tests.basecamp.conftest import MakeClient
from tests.support.ports import held_port


def a_minute_ago() -> datetime:
    return datetime.now(UTC) - timedelta(minutes=1)


def comment_on(standin: StandIn) -> Destination:
    project = standin.world.projects[0]
    return Destination(MessageKind.comment, project.id, project.recording_ids[0])


def test_a_created_message_is_a_receipt_naming_its_id(standin: StandIn, make_client: MakeClient) -> None:
    outcome = make_client().post(comment_on(standin), "<div>hello</div>")
    assert isinstance(outcome, Created)
    stored = standin.messages("comment", comment_on(standin).recording_id)
    assert [message["id"] for message in stored] == [outcome.id]
    assert standin.post_count() == 1


@pytest.mark.parametrize(
    "kind", [MessageKind.boost, MessageKind.comment, MessageKind.chat_line], ids=str
)
def test_each_kind_posts_to_its_own_route(
    standin: StandIn, make_client: MakeClient, kind: MessageKind
) -> None:
    project = standin.world.projects[0]
    where = project.campfire_id if kind is MessageKind.chat_line else project.recording_ids[0]
    outcome = make_client().post(Destination(kind, project.id, where), "👀 received")
    assert isinstance(outcome, Created)
    assert [message["id"] for message in standin.messages(str(kind), where)] == [outcome.id]


@pytest.mark.parametrize("status", [403, 404, 422])
def test_a_4xx_is_refused_and_nothing_exists(standin: StandIn, make_client: MakeClient, status: int) -> None:
    standin.add_fault(Fault(action=FaultAction.refuse, method="POST", status=status))
    outcome = make_client().post(comment_on(standin), "<div>hello</div>")
    assert isinstance(outcome, Refused)
    assert (outcome.cause, outcome.status) == (RefusalCause.answered, status)
    assert standin.messages("comment", comment_on(standin).recording_id) == []
    assert standin.post_count() == 1


def test_the_real_validation_refusals_are_refusals(standin: StandIn, make_client: MakeClient) -> None:
    project = standin.world.projects[0]
    client = make_client()
    empty = client.post(comment_on(standin), "")
    too_long = client.post(Destination(MessageKind.boost, project.id, project.recording_ids[0]), "x" * 17)
    nowhere = client.post(Destination(MessageKind.comment, project.id, 999_999_999), "<div>hi</div>")
    assert [getattr(outcome, "status", None) for outcome in (empty, too_long, nowhere)] == [422, 422, 404]
    assert all(isinstance(outcome, Refused) for outcome in (empty, too_long, nowhere))
    assert standin.post_count() == 3


def test_a_429_is_sent_once_refused_and_holds_every_later_request(
    standin: StandIn, make_client: MakeClient
) -> None:
    standin.add_fault(Fault(action=FaultAction.rate_limit, method="POST", retry_after="2"))
    clock = FakeClock()
    client = make_client(clock=clock)
    outcome = client.post(comment_on(standin), "<div>hello</div>")
    assert isinstance(outcome, Refused)
    assert (outcome.status, outcome.retry_after_seconds) == (429, 2.0)
    assert standin.post_count() == 1
    assert client.rate_limited_for() == pytest.approx(2.0)
    before = clock.monotonic()
    client.me()
    assert clock.monotonic() - before >= 2.0


@pytest.mark.parametrize("status", [500, 503])
def test_a_5xx_is_sent_once_and_uncertain(standin: StandIn, make_client: MakeClient, status: int) -> None:
    standin.add_fault(Fault(action=FaultAction.server_error, method="POST", status=status))
    outcome = make_client().post(comment_on(standin), "<div>hello</div>")
    assert isinstance(outcome, Uncertain)
    assert outcome.cause is UncertainCause.server_error
    assert standin.post_count() == 1


def test_created_then_dropped_is_uncertain_sent_once_and_exists(
    standin: StandIn, make_client: MakeClient
) -> None:
    standin.add_fault(Fault(action=FaultAction.create_then_drop, method="POST"))
    outcome = make_client().post(comment_on(standin), "<div>hello</div>")
    assert isinstance(outcome, Uncertain)
    assert outcome.cause is UncertainCause.connection_lost
    assert standin.post_count() == 1
    assert len(standin.messages("comment", comment_on(standin).recording_id)) == 1


def test_dropped_without_creating_is_still_uncertain_and_sent_once(
    standin: StandIn, make_client: MakeClient
) -> None:
    standin.add_fault(Fault(action=FaultAction.drop_without_create, method="POST"))
    outcome = make_client().post(comment_on(standin), "<div>hello</div>")
    assert isinstance(outcome, Uncertain)
    assert standin.post_count() == 1
    assert standin.messages("comment", comment_on(standin).recording_id) == []


def test_a_timeout_is_uncertain_sent_once_and_bounded_by_the_deadline(
    standin: StandIn, make_client: MakeClient
) -> None:
    standin.add_fault(Fault(action=FaultAction.create_then_delay, method="POST", delay=3.0))
    client = make_client(post_timeout=60.0)
    started = time.monotonic()
    outcome = client.post(comment_on(standin), "<div>hello</div>", deadline=client.deadline_in(0.5))
    assert time.monotonic() - started < 1.5
    assert isinstance(outcome, Uncertain)
    assert outcome.cause is UncertainCause.timeout
    assert standin.post_count() == 1


def test_a_2xx_without_an_id_is_uncertain(standin: StandIn, make_client: MakeClient) -> None:
    standin.add_fault(Fault(action=FaultAction.no_id, method="POST"))
    outcome = make_client().post(comment_on(standin), "<div>hello</div>")
    assert isinstance(outcome, Uncertain)
    assert outcome.cause is UncertainCause.no_id
    assert standin.post_count() == 1


def test_no_connection_is_refused_because_the_request_never_left() -> None:
    with held_port() as port:  # nothing listens there, and nothing else can take it meanwhile
        client = BasecampClient(f"http://127.0.0.1:{port}", 1, "t", "tests (t@example.com)")
        outcome = client.post(Destination(MessageKind.comment, 1, 2), "<div>hello</div>")
    assert isinstance(outcome, Refused)
    assert outcome.cause is RefusalCause.not_connected


def test_a_deadline_already_passed_sends_nothing(standin: StandIn, make_client: MakeClient) -> None:
    client = make_client()
    outcome = client.post(comment_on(standin), "<div>hello</div>", deadline=client.deadline_in(-1))
    assert isinstance(outcome, Refused)
    assert outcome.cause is RefusalCause.not_sent
    assert standin.post_count() == 0


def test_a_keep_alive_connection_the_server_closed_is_never_a_second_request(
    make_client: MakeClient,
) -> None:
    with StandIn(world="empty", keepalive_timeout=0.2) as standin:
        client = BasecampClient(
            standin.base_url, standin.world.account_id, standin.world.token, "tests (t@example.com)"
        )
        project = standin.world.projects[0]
        where = Destination(MessageKind.comment, project.id, project.recording_ids[0])
        client.list(
            where, since=a_minute_ago(), creator_id=standin.world.agent.id, deadline=client.deadline_in(5)
        )
        time.sleep(0.5)  # the server closes the pooled connection
        outcomes = [client.post(where, f"<div>message {n}</div>") for n in range(3)]
        client.list(
            where, since=a_minute_ago(), creator_id=standin.world.agent.id, deadline=client.deadline_in(5)
        )
        time.sleep(0.5)
        outcomes.append(client.post(where, "<div>after idle</div>"))
        assert all(isinstance(outcome, Created) for outcome in outcomes)
        assert standin.post_count() == 4
        assert len(standin.messages("comment", project.recording_ids[0])) == 4


def test_the_token_never_appears_in_a_log_a_repr_or_an_error(
    standin: StandIn, make_client: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client = make_client()
    token = standin.world.token
    standin.add_fault(Fault(action=FaultAction.server_error, method="GET", status=500))
    with pytest.raises(Exception) as failure:  # noqa: PT011 -- any error: its text is what is checked
        client.list(comment_on(standin), a_minute_ago(), standin.world.agent.id, client.deadline_in(5))
    client.post(comment_on(standin), "<div>hello</div>")
    texts = [record.getMessage() for record in caplog.records] + [repr(client), str(failure.value)]
    assert caplog.records, "the client logs its requests"
    assert not [text for text in texts if token in text]
    sent = standin.requests()[-1]
    assert sent.headers["user-agent"] == "basecamp-connector tests (tests@example.com)"
    assert token not in str(sent.headers)


def test_https_is_required_except_to_loopback() -> None:
    with pytest.raises(ValueError, match="https"):
        BasecampClient("http://3.basecampapi.com", 1, "t", "tests (t@example.com)")
    BasecampClient("https://3.basecampapi.com", 1, "t", "tests (t@example.com)")
