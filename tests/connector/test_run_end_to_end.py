"""`bin/connect run` as a real process against the stand-in, end to end: every event gets
exactly the messages the design note asks for, and restarts in the middle repeat none.

Three connector processes, one after another on one state directory, read the demo world's
feed: Website Launch and Mobile App have routes, Archive has none. What each event is owed
(``core.admission``'s trigger matrix, ``core.settlement``, ``core.message_kinds``), in the order
the scene makes them:

First process.
* A mention on a routed card; a mention in a routed Campfire; the operator assigning the agent
  a routed card (``assigned`` is a request too, ``Acknowledge``): the worker's own boost on
  what asked (the comment, the line, the card: the event's own recording), reported with
  ack_dispatch, and its reply (a comment on the card; a line in the Campfire). The guard armed
  at the verdict is canceled by get_dispatch, so the connector says nothing; every event
  succeeded with a reply, so no completion notice ("An attempt where every event succeeded
  with a reply gets no notice").
* In the project with no route, a mention on a card, an assignment and a mention in its
  Campfire: ``blocked(no_route)``, exactly one holding reply each from the connector (a comment,
  or a Campfire line), no worker, no guard (a guard is for an admitted or queued verdict).
* A mention by someone operator-only trust does not cover: ``discarded(untrusted_performer)``
  at the gate, and the operator assigning someone else: ``discarded(not_addressed)``. Nothing.
* A mention whose summary read is still in flight when the process is SIGKILLed: intake had
  recorded it ``seen``; the next start re-runs admission on it, and it is answered once.

[SIGKILL between events. A mention made while no connector runs.] Second process.
* That mention, whose worker replies and reports it failed: its boost and reply, and exactly
  one completion notice naming the event with ``bin/connect redispatch <id>``.
* A comment mentioning nobody on a routed card the agent is subscribed to: ``subscribed`` is
  admitted but asks for nothing (``Acknowledge`` false): no guard and no boost from the worker
  (its instruction says acknowledge false); the worker's reply only; no notice. The same for a
  routed card the agent is assigned to being completed (``completed``).
* A comment mentioning nobody on a card the agent is not subscribed to, and one on a subscribed
  card of the project with no route: ``discarded(not_addressed)`` both -- where there is no
  route the gate drops the subscribed rule before any read ("every other trigger is discarded
  there"), which leaves ``mentioned``, and nothing mentions the agent. A card completed there:
  ``discarded(no_route)``, no rule left at all. Nothing is said for any of them.
* A mention whose worker pulls it and exits 1 without reporting: no acknowledgement (the pull
  canceled the guard: a missing acknowledgement costs less than a doubled one), and one
  completion notice: the worker failed, the event unknown, needs a person.
* Side by side: a mention whose worker is slower to pull than the guard delay -- the
  connector's ``👀 received`` boost on the comment that asked, then no boost from the worker
  (it is told guard_acknowledged), its reply, no notice; and a mention whose worker dies
  before it pulls -- its guard waits until due and is then canceled (``core.message_kinds``:
  the record completed), and one completion notice says unknown.
* A mention whose worker is still at work at SIGTERM: the shutdown stops and settles it and
  flushes one completion notice (the connector shut down and stopped the worker; unknown).

[SIGTERM.] Third process: nothing to do, and nothing is said again.

What Basecamp holds is read from the stand-in's own store; the connector's voice is told from
the worker's by the outbox's receipts (a worker's words, posted by the connector for it, are the
worker's voice), and cross-checked against the stand-in's request log: every POST with the
connector's User-Agent made exactly one notice or one of a worker's messages.

The poll is every 0.5 s: the connector's one client paces all its requests (45 in any 10 s);
a full pacing window is not a rate limit, and the outbox still claims
(tests/outbox/test_outbox_with_client.py).
"""

from __future__ import annotations

import html
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core import templates
from core.destinations import MessageKind
from core.text import message_text
from shell.basecamp.standin.api import MENTION_TYPE
from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn
from shell.cli.main import main as connect
from shell.cli.run import USER_AGENT as CONNECTOR_USER_AGENT
from shell.ledger.connection import open_ledger_read_only
from tests.support.configured import POLL_SECONDS

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
REPOSITORY = Path(__file__).resolve().parents[2]
WORKER_ACKNOWLEDGEMENT = "on it"  # shell.demo.worker's boost
GUARD_DELAY_SECONDS = 8
SLOWER_THAN_THE_GUARD = GUARD_DELAY_SECONDS + 5
SETTLE_SECONDS = 45.0


@dataclass(frozen=True, slots=True)
class Said:
    """One message the agent's account holds: whose voice, what kind, on what, its words."""

    voice: str  # "worker" or "connector"
    kind: str  # "boost", "comment" or "chat_line"
    on: int  # the recording (or Campfire) it is on
    text: str


def worker_boost(on: int) -> Said:
    return Said("worker", "boost", on, WORKER_ACKNOWLEDGEMENT)


def worker_reply(on: int, event_id: int, kind: str = "comment") -> Said:
    return Said("worker", kind, on, f"Done with event {event_id}.")


def guard_boost(on: int) -> Said:
    return Said("connector", "boost", on, templates.GUARD_ACKNOWLEDGEMENT)


def notice(on: int, lines: tuple[str, ...], kind: str = "comment") -> Said:
    return Said("connector", kind, on, message_text(templates.render(lines, MessageKind(kind))))


class Scene:
    """The stand-in, one state directory, and the connector process now running on it."""

    def __init__(self, standin: StandIn, tmp_path: Path) -> None:
        self.standin = standin
        self.tmp = tmp_path
        self.state = tmp_path / "state"
        self.parts = tmp_path / "parts.json"
        self.parts.write_text("{}")
        self.process: subprocess.Popen[str] | None = None
        self.runs = 0
        world = standin.world
        self.agent = world.agent.id
        self.operator = world.people[0]
        self.stranger = world.people[1]  # not trusted: the trust mode is the operator alone
        self.website, self.mobile, self.archive = world.projects  # the archive gets no route
        self.asking: dict[int, int] = {}  # event id -> the comment or line that asked

    # -- configuration ---------------------------------------------------------------------

    def configure(self) -> None:
        world = self.standin.world
        token_file = self.tmp / "token"
        token_file.write_text(world.token + "\n")
        token_file.chmod(0o600)
        routes = []
        for project in (self.website, self.mobile):
            work = self.tmp / f"work-{project.id}"
            work.mkdir()
            routes += ["--route", f"{project.id}={work}"]
        # The demo worker plays, for each event, the part the scene file names for it: it reads
        # the event id from its prompt and waits for the scene to write the part.
        worker = [
            "env", f"PYTHONPATH={REPOSITORY}", sys.executable, "-m", "shell.demo.worker",
            "--mcp-config", "{mcp_config}", "--prompt", "{prompt}", "--scenes", str(self.parts),
            "--base-url", self.standin.base_url, "--account", str(world.account_id),
            "--token-file", str(token_file),
        ]  # fmt: skip
        arguments = [
            "setup",
            "--state-dir", str(self.state),
            "--base-url", self.standin.base_url,
            "--account", str(world.account_id),
            "--agent", str(self.agent),
            "--token-file", str(token_file),
            "--operator", str(self.operator.id),
            *routes,
            "--worker-command", shlex.join(worker),
            # Short timings for a fast scene. A worker pulls within about two seconds of its
            # verdict, well inside the guard delay; the slow one waits SLOWER_THAN_THE_GUARD.
            "--guard-delay", f"{GUARD_DELAY_SECONDS}s",
            "--reconcile-after", "2s",
            "--deadline", "1m",
            "--unsafe-test-timings",
        ]  # fmt: skip
        assert connect(arguments) == 0

    # -- the connector process -------------------------------------------------------------

    def start(self, poll_seconds: float = POLL_SECONDS) -> None:
        assert self.process is None
        self.runs += 1
        environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
        with (
            (self.tmp / f"run-{self.runs}.out").open("w") as output,
            (self.tmp / f"run-{self.runs}.err").open("w") as errors,
        ):
            self.process = subprocess.Popen(
                [
                    str(REPOSITORY / "bin" / "connect"), "--verbose", "run", "--state-dir", str(self.state),
                    "--poll-seconds", str(poll_seconds), "--shutdown-seconds", "10",
                ],
                env=environment,
                stdout=output,
                stderr=errors,
                text=True,
            )  # fmt: skip
        self.wait(
            lambda: any(line.startswith("running account=") for line in self.output().splitlines()),
            "the connector never said it runs",
        )

    def output(self, stream: str = "out") -> str:
        return (self.tmp / f"run-{self.runs}.{stream}").read_text()

    def stop(self, how: signal.Signals) -> int:
        assert self.process is not None
        self.process.send_signal(how)
        code = self.process.wait(timeout=60)
        self.process = None
        return code

    def kill_if_running(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        self.process = None

    def wait(self, condition: Callable[[], bool], what: Callable[[], str] | str,
             timeout: float = SETTLE_SECONDS) -> None:  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                pytest.fail(f"the connector exited ({self.process.returncode}) while waiting")
            if condition():
                return
            time.sleep(0.1)
        pytest.fail(what if isinstance(what, str) else what())

    # -- the ledger, read-only -------------------------------------------------------------

    def query(self, sql: str, *parameters: object) -> list[tuple[object, ...]]:
        with open_ledger_read_only(self.state / "ledger.sqlite3") as ledger, ledger.read() as connection:
            return [tuple(row) for row in connection.execute(sql, parameters).fetchall()]

    def record(self, event_id: int) -> tuple[object, ...] | None:
        found = self.query(
            "SELECT state, reason, trigger_name, acknowledge FROM events WHERE id = ?", event_id
        )
        return found[0] if found else None

    def in_flight(self) -> list[tuple[object, ...]]:
        """Live attempts, and intents pending or sending."""
        return self.query(
            "SELECT 'attempt', id, state FROM attempts WHERE state <> 'ended'"
            " UNION ALL SELECT kind, id, state FROM outbox WHERE state IN ('pending', 'sending')"
        )

    def settle(self, *expected: tuple[int, str]) -> None:
        """Wait until each event's record is in its state and nothing is in flight."""

        def settled() -> bool:
            states = [self.record(event_id) for event_id, _ in expected]
            reached = all(
                found is not None and found[0] == state
                for found, (_, state) in zip(states, expected, strict=True)
            )
            return reached and not self.in_flight()

        self.wait(
            settled,
            lambda: (
                f"never settled: {[(e, self.record(e)) for e, _ in expected]}, in flight {self.in_flight()}"
            ),
        )

    # -- the scene's moves -----------------------------------------------------------------

    def play(self, event_id: int, part: str) -> None:
        """The worker started for ``event_id`` plays ``part`` (``shell.demo.worker``)."""
        parts = json.loads(self.parts.read_text())
        parts[str(event_id)] = part
        temporary = self.parts.with_suffix(".tmp")
        temporary.write_text(json.dumps(parts))
        temporary.replace(self.parts)

    def mention(self, card: int, text: str, part: str = "answer", *, by: int | None = None) -> int:
        """The operator (or ``by``) mentions the agent in a comment on ``card``."""
        event_id = self.standin.mention(by or self.operator.id, card, text)
        self.play(event_id, part)
        (event,) = [event for event in self.standin.feed.events() if event.id == event_id]
        self.asking[event_id] = event.recording_id
        return event_id

    def assign(self, card: int, part: str = "answer", *, assignee: int | None = None) -> int:
        """The operator adds the agent (or ``assignee``) to ``card``'s assignees."""
        event_id = self.standin.assign(self.operator, card, assignee or self.agent)
        self.play(event_id, part)
        return event_id

    def complete(self, card: int, part: str = "answer") -> int:
        """The operator completes ``card`` (the feed's ``card.completed``)."""
        (bucket,) = [project.id for project in self.standin.world.projects if card in project.recording_ids]
        event = self.standin.feed.record(
            "card.completed", bucket_id=bucket, creator_id=self.operator.id, recording_id=card,
            created_at=datetime.now(UTC),
        )  # fmt: skip
        self.play(event.id, part)
        return event.id

    def mention_in_campfire(self, campfire: int, text: str, part: str = "answer") -> int:
        """The operator mentions the agent in a line of the Campfire ``campfire``."""
        agent = self.standin.world.agent
        content = (
            f'<bc-attachment sgid="{html.escape(agent.sgid)}" content-type="{MENTION_TYPE}">'
            f"@{html.escape(agent.name.split()[0])}</bc-attachment> {html.escape(text)}"
        )
        line_id = self.standin.seed_message("chat_line", campfire, self.operator.id, content)
        return self._made(line_id, part)

    def comment(self, card: int, text: str, part: str = "answer") -> int:
        """The operator comments on ``card``, mentioning nobody."""
        comment_id = self.standin.seed_message(
            "comment", card, self.operator.id, f"<div>{html.escape(text)}</div>"
        )
        return self._made(comment_id, part)

    def _made(self, recording_id: int, part: str) -> int:
        event = self.standin.feed.event_about(recording_id)
        assert event is not None
        self.play(event.id, part)
        self.asking[event.id] = recording_id
        return event.id

    # -- what Basecamp holds ---------------------------------------------------------------

    def receipts(self) -> set[int]:
        """The connector's own messages: the receipts of every intent but a worker's words, which
        the connector posts for the worker, in the worker's voice."""
        found = self.query("SELECT receipt_id FROM outbox WHERE receipt_id IS NOT NULL AND kind NOT LIKE 'worker_%'")
        return {int(str(row[0])) for row in found}

    def worker_words_posted(self) -> int:
        """The worker's messages the connector posted for it."""
        (row,) = self.query("SELECT COUNT(*) FROM outbox WHERE receipt_id IS NOT NULL AND kind LIKE 'worker_%'")
        return int(str(row[0]))

    def said(self) -> Counter[Said]:
        """Every message the agent's account holds on the world's cards, their comments, the
        Campfires and their lines."""
        receipts = self.receipts()
        held: list[tuple[str, int, dict[str, object]]] = []
        for project in self.standin.world.projects:
            places = [(card, "comment") for card in project.recording_ids] + [
                (project.campfire_id, "chat_line")
            ]
            for place, kind in places:
                messages = self.standin.messages(kind, place)
                held += [(kind, place, message) for message in messages]
                for target in [place, *(int(str(message["id"])) for message in messages)]:
                    if target != project.campfire_id:
                        held += [("boost", target, boost) for boost in self.standin.messages("boost", target)]
        found: Counter[Said] = Counter()
        for kind, on, message in held:
            author = message["booster" if kind == "boost" else "creator"]
            assert isinstance(author, dict)
            if author["id"] != self.agent:
                continue
            voice = "connector" if message["id"] in receipts else "worker"
            found[Said(voice, kind, on, message_text(str(message["content"])))] += 1
        return found

    def connector_posts(self) -> int:
        """POSTs that reached the stand-in from the connector itself (its User-Agent), but for
        the live lane's stream tickets and any answered 429, which create nothing in Basecamp.
        (Basecamp's limit is per address: the workers on the connector's machine draw on it too,
        so a 429 can come; the outbox then sends the message again later, once -- what ``said``
        holds is asserted exactly, so a doubled message would still fail.)"""
        return sum(
            1
            for request in self.standin.requests()
            if request.method == "POST"
            and request.headers.get("user-agent") == CONNECTOR_USER_AGENT
            and not request.path.endswith("/events/stream_ticket.json")
            and request.status != 429
        )

    def attempt_of(self, event_id: int) -> tuple[str, int]:
        """The attempt that exposed ``event_id``, and its task."""
        (row,) = self.query(
            "SELECT a.id, a.task_id FROM attempts a JOIN task_events te ON te.exposed_attempt_id = a.id"
            " WHERE te.event_id = ?",
            event_id,
        )
        return str(row[0]), int(str(row[1]))

    def completion(self, event_id: int, stop_sentence: str, line: str) -> tuple[str, ...]:
        """The completion notice of the attempt that exposed ``event_id``, as its template words it
        (``core.templates.completion``: stop sentence, one line per event, the signature)."""
        attempt_id, task_id = self.attempt_of(event_id)
        return (
            f"Task {task_id} ended: {stop_sentence}.",
            line,
            "",
            f"Attempt {attempt_id} · {templates.SIGNATURE}",
        )


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[Scene]:
    with StandIn(world="demo") as standin:
        scene = Scene(standin, tmp_path)
        try:
            yield scene
        finally:
            scene.kill_if_running()


def needs_a_person(event_id: int, what: str) -> str:
    return f"Event {event_id}: {what}. Needs a person: bin/connect redispatch {event_id}"


def test_each_event_gets_exactly_its_messages_across_a_restart(scene: Scene) -> None:
    started = time.monotonic()
    scene.configure()
    website_card, release_card = scene.website.recording_ids
    (mobile_card,) = scene.mobile.recording_ids
    (archive_card,) = scene.archive.recording_ids
    expected: dict[int, Counter[Said]] = {}
    scene.start()

    # -- the first process ------------------------------------------------------------------
    mentioned = scene.mention(website_card, "please fix the form")
    scene.settle((mentioned, "completed"))
    expected[mentioned] = Counter(
        [worker_boost(scene.asking[mentioned]), worker_reply(website_card, mentioned)]
    )

    assigned = scene.assign(release_card)
    chatted = scene.mention_in_campfire(scene.mobile.campfire_id, "is the build green?")
    scene.settle((assigned, "completed"), (chatted, "completed"))
    expected[assigned] = Counter([worker_boost(release_card), worker_reply(release_card, assigned)])
    expected[chatted] = Counter(
        [worker_boost(scene.asking[chatted]), worker_reply(scene.mobile.campfire_id, chatted, "chat_line")]
    )

    unrouted = scene.mention(archive_card, "and this one?")
    unrouted_assigned = scene.assign(archive_card)
    unrouted_chat = scene.mention_in_campfire(scene.archive.campfire_id, "anyone?")
    stranger = scene.mention(archive_card, "me too", by=scene.stranger.id)
    other_assigned = scene.assign(mobile_card, assignee=scene.stranger.id)
    scene.settle(
        (unrouted, "blocked"), (unrouted_assigned, "blocked"), (unrouted_chat, "blocked"),
        (stranger, "discarded"), (other_assigned, "discarded"),
    )  # fmt: skip
    expected[unrouted] = Counter([notice(archive_card, templates.holding_reply(unrouted))])
    expected[unrouted_assigned] = Counter([notice(archive_card, templates.holding_reply(unrouted_assigned))])
    expected[unrouted_chat] = Counter(
        [notice(scene.archive.campfire_id, templates.holding_reply(unrouted_chat), "chat_line")]
    )
    expected[stranger] = expected[other_assigned] = Counter()

    before_restart = scene.said()
    assert before_restart == sum(expected.values(), Counter()), "before the restart"

    # -- killed while admission reads an event intake recorded: it stays seen, undecided
    account = scene.standin.world.account_id
    scene.standin.add_fault(Fault(FaultAction.hang, "GET", f"/{account}/comments/", delay=30))  # the next one
    interrupted = scene.mention(website_card, "are you there?")
    read = f"/{account}/comments/{scene.asking[interrupted]}"
    scene.wait(
        lambda: (
            any(request.path.startswith(read) for request in scene.standin.requests())
            and scene.record(interrupted) == ("seen", "", "", 0)
        ),
        "admission never began reading the event",
    )
    assert scene.stop(signal.SIGKILL) == -signal.SIGKILL
    expected[interrupted] = Counter(
        [worker_boost(scene.asking[interrupted]), worker_reply(website_card, interrupted)]
    )

    # -- made while no connector runs; the second process reads it from where the first stopped
    failed = scene.mention(mobile_card, "try the crash fix", part="report_failed")
    scene.start()
    scene.settle((interrupted, "completed"), (failed, "completed"))
    expected[failed] = Counter(
        [
            worker_boost(scene.asking[failed]),
            worker_reply(mobile_card, failed),
            notice(
                mobile_card, scene.completion(failed, "the worker finished", needs_a_person(failed, "failed"))
            ),
        ]
    )

    scene.standin.subscribe(scene.agent, website_card)
    scene.standin.subscribe(scene.agent, archive_card)
    subscribed = scene.comment(website_card, "the form looks fine now")
    unaddressed = scene.comment(mobile_card, "a note for the team")
    unrouted_subscribed = scene.comment(archive_card, "a note in the archive")
    completed = scene.complete(release_card)  # the agent is its assignee
    unrouted_completed = scene.complete(archive_card)
    scene.settle(
        (subscribed, "completed"), (unaddressed, "discarded"), (unrouted_subscribed, "discarded"),
        (completed, "completed"), (unrouted_completed, "discarded"),
    )  # fmt: skip
    expected[subscribed] = Counter([worker_reply(website_card, subscribed)])
    expected[completed] = Counter([worker_reply(release_card, completed)])
    expected[unaddressed] = expected[unrouted_subscribed] = expected[unrouted_completed] = Counter()

    unknown = "unknown, the worker did not report on it"
    lost = scene.mention(mobile_card, "one more thing", part="fail")
    scene.settle((lost, "completed"))
    expected[lost] = Counter(
        [notice(mobile_card, scene.completion(lost, "the worker failed", needs_a_person(lost, unknown)))]
    )

    # Two projects, two working directories: these two run side by side.
    slow = scene.mention(website_card, "no hurry", part=f"slow:{SLOWER_THAN_THE_GUARD}")
    crashed = scene.mention(mobile_card, "and the notes?", part="slow:never")  # exits 1 before it pulls
    scene.settle((slow, "completed"), (crashed, "completed"))
    expected[slow] = Counter([guard_boost(scene.asking[slow]), worker_reply(website_card, slow)])
    expected[crashed] = Counter(
        [
            notice(
                mobile_card, scene.completion(crashed, "the worker failed", needs_a_person(crashed, unknown))
            )
        ]
    )

    # -- SIGTERM with a worker at work: it is stopped, settled, and its notice flushed on the way out
    hung = scene.mention(mobile_card, "this will take a while", part="hang")
    scene.wait(
        lambda: (
            scene.query("SELECT state, note FROM outbox WHERE event_id = ?", hung)
            == [("canceled", "get_dispatch")]
        ),
        "the worker never pulled its instruction",
    )
    assert scene.stop(signal.SIGTERM) == 0
    assert not scene.in_flight(), "the shutdown settled the attempt and sent its notice"
    expected[hung] = Counter(
        [
            notice(
                mobile_card,
                scene.completion(
                    hung, "the connector shut down and stopped the worker", needs_a_person(hung, unknown)
                ),
            )
        ]
    )
    settled = scene.said()

    # -- a third start on the same state: nothing is said again
    scene.start()
    time.sleep(2)
    assert not scene.in_flight()
    assert scene.stop(signal.SIGTERM) == 0
    assert scene.said() == settled, "a restart after SIGTERM repeats nothing"
    elapsed = time.monotonic() - started

    # -- what Basecamp holds: exactly what each event is owed, nothing twice, nothing else
    said = scene.said()
    for event_id, owed in expected.items():
        got = Counter({message: said[message] for message in owed})
        assert got == owed, f"event {event_id}"
    assert said == sum(expected.values(), Counter()), "nothing else was said"
    first = (
        mentioned,
        assigned,
        chatted,
        unrouted,
        unrouted_assigned,
        unrouted_chat,
        stranger,
        other_assigned,
    )  # decided before the kill
    assert sum((expected[event_id] for event_id in first), Counter()) == before_restart, "none repeated"
    connector_messages = sum(count for message, count in said.items() if message.voice == "connector")
    assert connector_messages == 8
    assert scene.connector_posts() == connector_messages + scene.worker_words_posted(), (
        "each connector POST made one notice or one of a worker's messages"
    )

    # -- what the ledger says
    records = {event_id: scene.record(event_id) for event_id in expected}
    assert records == {
        mentioned: ("completed", "", "mentioned", 1),
        interrupted: ("completed", "", "mentioned", 1),
        assigned: ("completed", "", "assigned", 1),
        chatted: ("completed", "", "mentioned", 1),
        unrouted: ("blocked", "no_route", "mentioned", 1),
        unrouted_assigned: ("blocked", "no_route", "assigned", 1),
        unrouted_chat: ("blocked", "no_route", "mentioned", 1),
        stranger: ("discarded", "untrusted_performer", "", 0),
        other_assigned: ("discarded", "not_addressed", "", 0),
        failed: ("completed", "", "mentioned", 1),
        subscribed: ("completed", "", "subscribed", 0),
        unaddressed: ("discarded", "not_addressed", "", 0),
        unrouted_subscribed: ("discarded", "not_addressed", "", 0),
        completed: ("completed", "", "completed", 0),
        unrouted_completed: ("discarded", "no_route", "", 0),
        lost: ("completed", "", "mentioned", 1),
        slow: ("completed", "", "mentioned", 1),
        crashed: ("completed", "", "mentioned", 1),
        hung: ("completed", "", "mentioned", 1),
    }
    outcomes = {row[0]: row[1] for row in scene.query("SELECT event_id, outcome FROM task_events")}
    assert outcomes == {
        mentioned: "succeeded",
        interrupted: "succeeded",
        assigned: "succeeded",
        chatted: "succeeded",
        failed: "failed",
        subscribed: "succeeded",
        completed: "succeeded",
        lost: "unknown",
        slow: "succeeded",
        crashed: "unknown",
        hung: "unknown",
    }
    intents = scene.query(
        "SELECT kind, coalesce(event_id, attempt_id), state, note FROM outbox WHERE kind NOT LIKE 'worker_%'"
    )
    words = scene.query("SELECT kind, event_id, state FROM outbox WHERE kind LIKE 'worker_%'")
    assert words, "the workers spoke through the connector"
    assert all(state == "sent" for _, _, state in words), "a worker's words: each posted"
    assert max(Counter((kind, event_id) for kind, event_id, _ in words).values()) == 1, "once per call"
    attempt = {event_id: scene.attempt_of(event_id)[0] for event_id in (failed, lost, crashed, hung)}
    assert sorted(intents, key=str) == sorted(
        [
            ("guard_ack", mentioned, "canceled", "get_dispatch"),
            ("guard_ack", interrupted, "canceled", "get_dispatch"),
            ("guard_ack", assigned, "canceled", "get_dispatch"),
            ("guard_ack", chatted, "canceled", "get_dispatch"),
            ("holding_reply", unrouted, "sent", ""),
            ("holding_reply", unrouted_assigned, "sent", ""),
            ("holding_reply", unrouted_chat, "sent", ""),
            ("guard_ack", failed, "canceled", "get_dispatch"),
            ("completion", attempt[failed], "sent", ""),
            ("guard_ack", lost, "canceled", "get_dispatch"),
            ("completion", attempt[lost], "sent", ""),
            ("guard_ack", slow, "sent", ""),
            ("guard_ack", crashed, "canceled", "no longer called for"),
            ("completion", attempt[crashed], "sent", ""),
            ("guard_ack", hung, "canceled", "get_dispatch"),
            ("completion", attempt[hung], "sent", ""),
        ],
        key=str,
    ), "a guard for each request dispatched, none for a subscription or a completion; one notice each"
    print(f"end to end in {elapsed:.1f} s")
