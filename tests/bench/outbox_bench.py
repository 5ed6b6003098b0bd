"""``bin/bench outbox``: the outbox's throughput against what SQLite itself allows, in one run.

What it measures, each on a fresh copy of one ledger template, all in one directory (one disk):

1. flush: ``Outbox.flush()`` draining N guard intents already due (written as the verdict writes them,
   the way ``tests/support/ledger_world`` writes them), through claim -> post -> receipt, with an
   in-process poster that answers at once. Seconds per intent.
2. floor: raw ``sqlite3`` doing the same two committed writes per intent with the ledger's own
   settings (WAL, synchronous=FULL, BEGIN IMMEDIATE) on a copy of the same migrated ledger:
   ``UPDATE outbox SET state='sending' ...`` then ``UPDATE outbox SET state='sent' ...``, each in
   its own transaction. Seconds per intent.
3. start: ``shell.connector.settle_previous`` over S stale sending intents (an hour old, each at its own
   destination), with a poster whose listing answers at once with exactly one matching message,
   so every intent is adopted. Seconds per intent.
4. adoption: ``core.adoption.decide_adoption`` over an L-message listing. Seconds per decision.

Interleaved: the same flush and floor on two copies, taking turns every ``INTERLEAVE_BLOCK``
intents until both are drained, each side's time summed; the median of these runs' ratios is
printed as ``interleaved ratio``, which a disk whose fsync time swings between runs moves less.

Beside 1, the same N intents drained by ``flush(limit=16)`` called until one finds nothing due:
the batch ``Outbox.run_once`` sends each tick (the tick's one-second wait is not counted).

Flush and floor alternate within each repeat (odd repeats flush first, even ones floor first);
each figure is the median of the repeats. Wall time is what the ratio is made of; CPU time (this
process's, fsync's system time included, waits not) is printed beside it, because wall time on
a shared machine moves with the disk's and the other processes' load. The last line is
``ratio: R``: flush() wall seconds per intent over floor wall seconds per intent.
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import logging
import os
import platform
import pstats
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

from core import notes, templates
from core.adoption import Adopt, Rival, decide_adoption
from core.destinations import Destination, ListedMessage, MessageKind
from core.posting import RUN_BATCH, Created, PostOutcome
from core.text import message_text
from core.timestamps import format_timestamp
from shell.connector import StartParts, settle_previous
from shell.ledger.connection import BUSY_TIMEOUT_SECONDS, Ledger, open_ledger
from shell.outbox import Outbox, SendResult
from tests.support.fake_basecamp import AGENT_ID, SOMEONE_ELSE
from tests.support.ledger_world import LedgerWorld

REPO = Path(__file__).resolve().parents[2]
DEFAULT_INTENTS = 2_000
DEFAULT_STALE = 10_000
DEFAULT_LISTING = 10_000
DEFAULT_REPEAT = 5  # fsync-bound wall times move run to run: the median of five moves less than of three
DEFAULT_DECISIONS = 25
WRITE_BATCH = 1_000  # events written per setup transaction
PROGRESS_EVERY = 2_000  # poster calls between progress lines during a timed step
BATCHED = f"flush(limit={RUN_BATCH})"  # the batch Outbox.run_once sends a tick
INTERLEAVE_BLOCK = 100  # intents each side moves before the other takes its turn (the interleaved run)
AGE = timedelta(hours=1)  # how far back the setup's clock runs: guards due, sendings stale


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "outbox",
        help="the outbox's intents per second against the raw SQLite floor (last line: ratio)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "Defaults take about a minute on 2 cores and an SSD. Progress goes to stderr; the "
            "table to stdout. Exit 1 if any timed intent did not end as the bench expects."
        ),
    )
    parser.add_argument(
        "--intents",
        type=_positive,
        default=DEFAULT_INTENTS,
        metavar="N",
        help=f"due guard intents each flush (and the floor) drains (default {DEFAULT_INTENTS})",
    )
    parser.add_argument(
        "--stale",
        type=_non_negative,
        default=DEFAULT_STALE,
        metavar="N",
        help=f"stale sending intents each start adopts; 0 skips it (default {DEFAULT_STALE})",
    )
    parser.add_argument(
        "--listing",
        type=_non_negative,
        default=DEFAULT_LISTING,
        metavar="N",
        help=f"messages in the listing one adoption decision reads; 0 skips it (default {DEFAULT_LISTING})",
    )
    parser.add_argument(
        "--repeat",
        type=_positive,
        default=DEFAULT_REPEAT,
        metavar="K",
        help=f"runs of flush, floor and start; the median is reported (default {DEFAULT_REPEAT})",
    )
    parser.add_argument(
        "--decisions",
        type=_positive,
        default=DEFAULT_DECISIONS,
        metavar="K",
        help=f"adoption decisions timed; the median is reported (default {DEFAULT_DECISIONS})",
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the ledgers go: a fresh owner-only directory is made inside DIR "
        "(default: the system temp directory; the bench says whether it is on "
        "the repo's disk)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the ledgers afterwards (the path is printed)"
    )
    parser.add_argument(
        "--log",
        choices=("warning", "info"),
        default="warning",
        help="the connector's log level while timing: warning is bin/connect's default; "
        "info is `bin/connect -v`, written to a file in the bench directory",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        metavar="DIR",
        help="after the timed runs, profile one more flush and one more start with "
        "cProfile (untimed): write DIR/flush.pstats and DIR/start.pstats and print "
        "the top functions to stderr",
    )
    parser.set_defaults(run=run)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


class BenchFailed(Exception):
    """The bench's own work did not end as it must (an intent not sent, a wrong decision)."""


# -- the pieces the outbox talks to -------------------------------------------------------------


class ShiftedClock:
    """Wall time ``AGE`` ago: the setup writes with it, so guards are due and sendings stale."""

    def now(self) -> datetime:
        return datetime.now(UTC) - AGE

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))


@dataclass
class InstantPoster:
    """A Basecamp that answers every post at once with a receipt; never rate-limited."""

    receipts: Iterator[int] = field(default_factory=lambda: itertools.count(5_000_000_000))
    posts: int = 0

    def post(self, destination: Destination, body: str, deadline: float | None = None) -> PostOutcome:
        self.posts += 1
        if self.posts % PROGRESS_EVERY == 0:
            progress(f"  ... {self.posts} posted")
        return Created(next(self.receipts))

    def list(
        self, destination: Destination, since: datetime, creator_id: int, deadline: float
    ) -> list[ListedMessage]:
        return []

    def rate_limited_for(self) -> float:
        return 0.0

    def probe(self, deadline: float) -> None:
        return None


@dataclass
class MatchingPoster:
    """A Basecamp whose listing of a destination answers at once with exactly one message: the
    agent's, created after ``since``, with the words of the intent at that destination."""

    words: dict[Destination, str]
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(6_000_000_000))
    listings: int = 0

    def post(self, destination: Destination, body: str, deadline: float | None = None) -> PostOutcome:
        raise BenchFailed("the start posted: only stale sending intents were in the ledger")

    def list(
        self, destination: Destination, since: datetime, creator_id: int, deadline: float
    ) -> list[ListedMessage]:
        self.listings += 1
        if self.listings % PROGRESS_EVERY == 0:
            progress(f"  ... {self.listings} listed")
        return [
            ListedMessage(next(self.ids), since + timedelta(seconds=1), creator_id, self.words[destination])
        ]

    def rate_limited_for(self) -> float:
        return 0.0

    def probe(self, deadline: float) -> None:
        return None


class OneTransaction:
    """Stands in for a ``Ledger`` inside ``LedgerWorld``: its ``write()`` yields one transaction
    already open, so the world's helpers (the same SQL and intents, one transaction each) write a
    thousand events in one commit instead of two thousand."""

    def __init__(self, connection: sqlite3.Connection, clock: ShiftedClock) -> None:
        self._connection = connection
        self.clock = clock

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        yield self._connection

    read = write


# -- ledgers ------------------------------------------------------------------------------------


def build_template(path: Path, count: int, stale: bool) -> None:
    """A migrated ledger with ``count`` guard intents (events admitted an hour ago, each on its own
    recording): due and pending, or (``stale``) claimed an hour ago and left sending."""
    clock = ShiftedClock()
    with open_ledger(path) as ledger:
        for first in range(1, count + 1, WRITE_BATCH):
            with ledger.write() as connection:
                world = LedgerWorld(OneTransaction(connection, clock))  # type: ignore[arg-type]
                for event_id in range(first, min(first + WRITE_BATCH, count + 1)):
                    world.request(event_id)
            progress(f"  ... {min(first + WRITE_BATCH - 1, count)} of {count} intents written")
        with ledger.write() as connection:
            if stale:
                moved = connection.execute(
                    "UPDATE outbox SET state = 'sending', sending_at = ? WHERE state = 'pending'",
                    (format_timestamp(clock.now()),),
                ).rowcount
            else:
                (moved,) = connection.execute(
                    "SELECT COUNT(*) FROM outbox WHERE state = 'pending'"
                ).fetchone()
        if moved != count:
            raise BenchFailed(f"the template holds {moved} intents, not {count}")
    checkpoint = sqlite3.connect(path)  # fold any WAL into the file, so a copy of the file is whole
    try:
        checkpoint.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        checkpoint.close()


def copy_ledger(template: Path, path: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(template, path)
    os.chmod(path, 0o600)
    return path


def raw_connection(path: Path) -> sqlite3.Connection:
    """A connection opened and configured the way ``shell.ledger.connection`` opens the owner's."""
    connection = sqlite3.connect(
        f"file:{quote(str(path))}?mode=rw",
        uri=True,
        timeout=BUSY_TIMEOUT_SECONDS,
        isolation_level=None,
        check_same_thread=False,
    )
    connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
    connection.execute("PRAGMA foreign_keys = ON")
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("PRAGMA journal_mode = WAL")
    return connection


def settings_of(connection: sqlite3.Connection) -> str:
    journal = connection.execute("PRAGMA journal_mode").fetchone()[0]
    synchronous = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}[
        connection.execute("PRAGMA synchronous").fetchone()[0]
    ]
    return f"journal_mode={journal} synchronous={synchronous}"


def states(connection: sqlite3.Connection) -> dict[str, int]:
    return dict(connection.execute("SELECT state, COUNT(*) FROM outbox GROUP BY state").fetchall())


# -- the measurements ---------------------------------------------------------------------------


@dataclass
class Run:
    seconds: float  # wall time: what the ratio is made of
    cpu: float  # this process's CPU time in the same span: the code's share, without the disk's waits
    settings: str


class Stopwatch:
    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def stop(self, settings: str) -> Run:
        return Run(time.perf_counter() - self.wall, time.process_time() - self.cpu, settings)


def time_flush(
    path: Path, intents: int, profiler: cProfile.Profile | None = None, limit: int | None = None
) -> Run:
    """One ``flush()`` draining the queue; with ``limit``, ``flush(limit=...)`` again and again until
    one finds nothing due, as ``Outbox.run`` does tick after tick (without the tick's wait)."""
    poster = InstantPoster()
    with open_ledger(path) as ledger:
        settings = _ledger_settings(ledger)
        outbox = Outbox(ledger, poster, AGENT_ID)
        if profiler is not None:
            profiler.enable()
        watch = Stopwatch()
        summary = outbox.flush(limit=limit)
        while limit is not None and summary.results[-1] is not SendResult.nothing_due:
            summary.results.extend(outbox.flush(limit=limit).results)
        result = watch.stop(settings)
        if profiler is not None:
            profiler.disable()
        with ledger.read() as connection:
            found = states(connection)
    if summary.count(SendResult.sent) != intents or summary.results[-1] is not SendResult.nothing_due:
        raise BenchFailed(
            f"the flush sent {summary.count(SendResult.sent)} of {intents}: {summary.results[-3:]}"
        )
    if found != {"sent": intents} or poster.posts != intents:
        raise BenchFailed(f"after the flush the outbox holds {found}, with {poster.posts} posts")
    return result


def time_flush_batched(path: Path, intents: int) -> Run:
    return time_flush(path, intents, limit=RUN_BATCH)


def floor_moves(connection: sqlite3.Connection, ids: list[int], receipts: Iterator[int]) -> None:
    """The floor's two committed writes for each of ``ids``: claimed, then sent."""
    for intent_id in ids:
        connection.execute("BEGIN IMMEDIATE")
        claimed = connection.execute(
            "UPDATE outbox SET state = 'sending', sending_at = ? WHERE id = ? AND state = 'pending'",
            (format_timestamp(datetime.now(UTC)), intent_id),
        ).rowcount
        connection.execute("COMMIT")
        connection.execute("BEGIN IMMEDIATE")
        settled = connection.execute(
            "UPDATE outbox SET state = 'sent', receipt_id = ?, finished_at = ?"
            " WHERE id = ? AND state = 'sending'",
            (next(receipts), format_timestamp(datetime.now(UTC)), intent_id),
        ).rowcount
        connection.execute("COMMIT")
        if claimed != 1 or settled != 1:
            raise BenchFailed(f"the floor could not move intent {intent_id}")


def _due_ids(connection: sqlite3.Connection) -> list[int]:
    return [
        row[0]
        for row in connection.execute("SELECT id FROM outbox WHERE state = 'pending' ORDER BY not_before, id")
    ]


def time_floor(path: Path, intents: int) -> Run:
    connection = raw_connection(path)
    try:
        settings = settings_of(connection)
        ids = _due_ids(connection)
        receipts = itertools.count(5_000_000_000)
        watch = Stopwatch()
        floor_moves(connection, ids, receipts)
        result = watch.stop(settings)
        found = states(connection)
    finally:
        connection.close()
    if found != {"sent": intents}:
        raise BenchFailed(f"after the floor the outbox holds {found}")
    return result


def time_interleaved(flush_path: Path, floor_path: Path, intents: int, block: int) -> tuple[Run, Run]:
    """``flush(limit=block)`` and the floor's writes for ``block`` intents, alternated block by
    block (each on its own copy of the template, one disk) until both are drained, each side's
    time summed: a slow stretch of the disk or the machine falls on both alike. The flush's
    figure includes one flush call's setup per block (the ``flush()`` row has one in all)."""
    poster = InstantPoster()
    connection = raw_connection(floor_path)
    wall = {"flush": 0.0, "floor": 0.0}
    cpu = {"flush": 0.0, "floor": 0.0}
    sent = 0
    try:
        floor_settings = settings_of(connection)
        ids = _due_ids(connection)
        receipts = itertools.count(5_000_000_000)
        with open_ledger(flush_path) as ledger:
            flush_settings = _ledger_settings(ledger)
            outbox = Outbox(ledger, poster, AGENT_ID)
            for index, start in enumerate(range(0, intents, block)):
                order = ["flush", "floor"] if index % 2 == 0 else ["floor", "flush"]
                for name in order:
                    watch = Stopwatch()
                    if name == "flush":
                        sent += outbox.flush(limit=block).count(SendResult.sent)
                    else:
                        floor_moves(connection, ids[start : start + block], receipts)
                    run = watch.stop("")
                    wall[name] += run.seconds
                    cpu[name] += run.cpu
            with ledger.read() as reading:
                flushed = states(reading)
        floored = states(connection)
    finally:
        connection.close()
    if sent != intents or flushed != {"sent": intents} or poster.posts != intents:
        raise BenchFailed(f"the interleaved flush sent {sent} of {intents}; the outbox holds {flushed}")
    if floored != {"sent": intents}:
        raise BenchFailed(f"after the interleaved floor the outbox holds {floored}")
    return Run(wall["flush"], cpu["flush"], flush_settings), Run(wall["floor"], cpu["floor"], floor_settings)


def time_start(path: Path, stale: int, profiler: cProfile.Profile | None = None) -> Run:
    with open_ledger(path) as ledger:
        settings = _ledger_settings(ledger)
        with ledger.read() as connection:
            words = {
                Destination(MessageKind(kind), bucket, recording): message_text(body)
                for kind, bucket, recording, body in connection.execute(
                    "SELECT message_kind, bucket_id, recording_id, body FROM outbox WHERE state = 'sending'"
                )
            }
        if len(words) != stale:
            raise BenchFailed(f"{stale} stale intents share {len(words)} destinations; each needs its own")
        poster = MatchingPoster(words)
        outbox = Outbox(ledger, poster, AGENT_ID)
        if profiler is not None:
            profiler.enable()
        watch = Stopwatch()
        summary = settle_previous(StartParts(outbox), time.monotonic() + 1_000_000).sent
        result = watch.stop(settings)
        if profiler is not None:
            profiler.disable()
        with ledger.read() as connection:
            found = states(connection)
            (adopted,) = connection.execute(
                "SELECT COUNT(*) FROM outbox WHERE state = 'sent' AND note = ?", (notes.ADOPTED,)
            ).fetchone()
    if summary.results != [SendResult.nothing_due] or found != {"sent": stale} or adopted != stale:
        raise BenchFailed(f"after the start the outbox holds {found} ({adopted} adopted); {summary.results}")
    if poster.listings != stale:
        raise BenchFailed(f"the start listed {poster.listings} destinations, not {stale}")
    return result


def _ledger_settings(ledger: Ledger) -> str:
    with ledger.read() as connection:
        return settings_of(connection)


@dataclass(frozen=True)
class AdoptionCase:
    body: str
    listed: list[ListedMessage]
    since: datetime
    owned: frozenset[int]
    workers: frozenset[int]
    rivals: list[Rival]
    expected: int


def adoption_case(size: int) -> AdoptionCase:
    """A busy destination: ``size`` comments, three in four the agent's (holding replies for other
    events, the same length as ours), one in four someone else's, a hundred older than ``since``,
    a hundred already other intents' receipts, a hundred workers' -- and exactly one ours."""
    since = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    ours = 900_000
    body = templates.render(templates.holding_reply(ours), MessageKind.comment)
    listed: list[ListedMessage] = []
    for index in range(size - 1):
        event_id = 100_000 + index  # six digits, as ours: same length, different words
        creator = SOMEONE_ELSE if index % 4 == 3 else AGENT_ID
        created = since + timedelta(seconds=index - 100)
        words = message_text(templates.render(templates.holding_reply(event_id), MessageKind.comment))
        listed.append(ListedMessage(7_000_000_000 + index, created, creator, words))
    expected = 8_000_000_000
    listed.insert(
        size // 2, ListedMessage(expected, since + timedelta(seconds=5), AGENT_ID, message_text(body))
    )
    agents = [message.id for message in listed if message.creator_id == AGENT_ID and message.id != expected]
    return AdoptionCase(
        body=body,
        listed=listed,
        since=since,
        owned=frozenset(agents[100:200]),
        workers=frozenset(agents[200:300]),
        rivals=[
            Rival(intent_id=2 + n, body=templates.render(templates.holding_reply(n), MessageKind.comment))
            for n in range(3)
        ],
        expected=expected,
    )


def time_decision(case: AdoptionCase) -> float:
    started = time.perf_counter()
    decision = decide_adoption(
        intent_id=1,
        body=case.body,
        listed=case.listed,
        since=case.since,
        agent_id=AGENT_ID,
        owned_receipts=case.owned,
        worker_messages=case.workers,
        rivals=case.rivals,
    )
    seconds = time.perf_counter() - started
    if decision != Adopt(case.expected):
        raise BenchFailed(f"the adoption decision was {decision}, not Adopt({case.expected})")
    return seconds


# -- the run ------------------------------------------------------------------------------------


def describe_disk(directory: Path) -> str:
    here, repo = os.stat(directory), os.stat(REPO)
    mount, device, kind = "?", "?", "?"
    real = os.path.realpath(directory)
    try:
        with open("/proc/mounts", encoding="utf-8") as mounts:
            for line in mounts:
                source, point, fstype = line.split()[:3]
                inside = real == point or real.startswith(point.rstrip("/") + "/")
                if inside and (mount == "?" or len(point) > len(mount)):
                    mount, device, kind = point, source, fstype
    except OSError:
        pass
    same = "the SAME device as" if here.st_dev == repo.st_dev else "a DIFFERENT device from"
    return f"{directory} ({kind} on {device}, mounted at {mount}; {same} the repo {REPO})"


def load() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} us"


def describe_run(name: str, result: Run, count: int) -> str:
    return (
        f"{name:<15} {result.seconds:7.3f} s = {us(result.seconds / count):>10}/intent "
        f"({count / result.seconds:6,.0f}/s); cpu {us(result.cpu / count):>10}/intent"
    )


class Median:
    """The median of some runs over ``count`` intents each, wall and CPU taken separately."""

    def __init__(self, runs: list[Run], count: int) -> None:
        self.wall = statistics.median(run.seconds for run in runs)
        self.wall_each = self.wall / count
        self.cpu_each = statistics.median(run.cpu for run in runs) / count

    def row(self, label: str) -> str:
        return (
            f"{label:<46} {self.wall:>7.3f} s {us(self.wall_each):>13} {1 / self.wall_each:>10,.0f} "
            f"{us(self.cpu_each):>12}"
        )


def run(args: argparse.Namespace) -> int:
    base = args.dir if args.dir is not None else Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="bench-outbox-", dir=base))  # 0700, as a ledger needs
    os.chmod(directory, 0o700)
    _configure_logging(args.log, directory)
    try:
        return _run(args, directory)
    except BenchFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        logging.shutdown()
        if args.keep:
            progress(f"kept {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)


def _configure_logging(level: str, directory: Path) -> None:
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    if level == "info":
        handler: logging.Handler = logging.FileHandler(directory / "connector.log", encoding="utf-8")
        root.setLevel(logging.INFO)
    else:
        handler = logging.StreamHandler(sys.stderr)
        root.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    root.addHandler(handler)


def _run(args: argparse.Namespace, directory: Path) -> int:
    out = print
    out(f"bin/bench outbox -- {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC")
    out(
        f"machine: Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
        f"{os.cpu_count()} CPUs, {platform.machine()} {platform.system()} {platform.release()}"
    )
    out(f"disk:    {describe_disk(directory)}")
    load_at_start = load()
    out(f"load:    {load_at_start} (1, 5, 15 min) on {os.cpu_count()} CPUs: other work skews the wall times")
    out(
        f"sizes:   --intents {args.intents} --stale {args.stale} --listing {args.listing} "
        f"--repeat {args.repeat} --decisions {args.decisions}; logging at {args.log.upper()}"
        + (" (bin/connect's default)" if args.log == "warning" else " (as bin/connect -v, to a file)")
    )

    progress(f"writing a template ledger with {args.intents} due guard intents")
    flush_template = directory / "template-due.sqlite3"
    build_template(flush_template, args.intents, stale=False)
    stale_template = directory / "template-stale.sqlite3"
    if args.stale:
        progress(f"writing a template ledger with {args.stale} stale sending intents")
        build_template(stale_template, args.stale, stale=True)

    out("")
    out(f"1+2. flush vs floor: {args.intents} due guard intents, claim -> post -> receipt, instant poster")
    flush_runs: list[Run] = []
    floor_runs: list[Run] = []
    batched_runs: list[Run] = []
    settings: set[str] = set()
    for repeat in range(1, args.repeat + 1):
        order: list[tuple[str, Callable[[Path, int], Run], list[Run]]] = [
            ("flush", time_flush, flush_runs),
            ("floor", time_floor, floor_runs),
            (BATCHED, time_flush_batched, batched_runs),
        ]
        if repeat % 2 == 0:
            order = [order[1], order[0], order[2]]
        figures: dict[str, str] = {}
        for name, measure, runs in order:
            progress(f"run {repeat}/{args.repeat}: {name} of {args.intents} intents")
            result = measure(
                copy_ledger(flush_template, directory / f"{name}-{repeat}.sqlite3"), args.intents
            )
            settings.add(f"{name}: {result.settings}")
            runs.append(result)
            figures[name] = describe_run(name, result, args.intents)
        out(f"  run {repeat} ({order[0][0]} first):")
        out(f"    {figures['flush']}")
        out(f"    {figures['floor']}")
        out(f"    {figures[BATCHED]}")
    for line in sorted(settings):
        out(f"  verified {line}, BEGIN IMMEDIATE per write")
    flush = Median(flush_runs, args.intents)
    floor = Median(floor_runs, args.intents)
    batched = Median(batched_runs, args.intents)

    out("")
    out(
        f"1+2 interleaved: the same intents, flush(limit={INTERLEAVE_BLOCK}) and the floor taking turns "
        f"every {INTERLEAVE_BLOCK} intents, each side's time summed"
    )
    turns: list[tuple[Run, Run]] = []
    for repeat in range(1, args.repeat + 1):
        progress(f"run {repeat}/{args.repeat}: flush and floor interleaved, {args.intents} intents each")
        turn = time_interleaved(
            copy_ledger(flush_template, directory / f"interleaved-flush-{repeat}.sqlite3"),
            copy_ledger(flush_template, directory / f"interleaved-floor-{repeat}.sqlite3"),
            args.intents,
            INTERLEAVE_BLOCK,
        )
        turns.append(turn)
        out(f"  run {repeat} (ratio {turn[0].seconds / turn[1].seconds:.2f}):")
        out(f"    {describe_run('flush', turn[0], args.intents)}")
        out(f"    {describe_run('floor', turn[1], args.intents)}")
    interleaved = Median([flushed for flushed, _ in turns], args.intents)
    interleaved_floor = Median([floored for _, floored in turns], args.intents)
    interleaved_ratio = statistics.median(flushed.seconds / floored.seconds for flushed, floored in turns)

    start: Median | None = None
    if args.stale:
        out("")
        out(
            f"3. start: {args.stale} stale sending intents (sending_at 1 h ago, each at its own destination),"
            " a listing of exactly one matching message each: all adopted"
        )
        start_runs: list[Run] = []
        for repeat in range(1, args.repeat + 1):
            progress(f"run {repeat}/{args.repeat}: start over {args.stale} stale intents")
            result = time_start(
                copy_ledger(stale_template, directory / f"start-{repeat}.sqlite3"), args.stale
            )
            start_runs.append(result)
            out(f"  run {repeat}: {describe_run('start', result, args.stale)}")
        start = Median(start_runs, args.stale)

    decision_median: float | None = None
    if args.listing:
        out("")
        progress(f"building a {args.listing}-message listing")
        case = adoption_case(args.listing)
        progress(f"timing {args.decisions} adoption decisions")
        decisions = [time_decision(case) for _ in range(args.decisions)]
        decision_median = statistics.median(decisions)
        out(
            f"4. adoption decision over a {args.listing}-message listing (one match, 3 rivals), "
            f"{args.decisions} decisions:"
        )
        out("  each (ms): " + " ".join(f"{seconds * 1e3:.2f}" for seconds in decisions))
        out(
            f"  median {decision_median * 1e3:.3f} ms/decision = "
            f"{decision_median / args.listing * 1e9:,.0f} ns per listed message "
            f"(min {min(decisions) * 1e3:.3f}, max {max(decisions) * 1e3:.3f} ms)"
        )

    if args.profile is not None:
        _profile(args, directory, flush_template, stale_template)

    out("")
    out(
        "wall: elapsed time (the ratio's); cpu: this process's CPU time in the same span, "
        "without the disk's waits"
    )
    out(
        f"{'measurement (median of runs)':<46} {'wall':>9} {'wall/intent':>13} {'per second':>10} "
        f"{'cpu/intent':>12}"
    )
    out(f"{'-' * 46} {'-' * 9} {'-' * 13} {'-' * 10} {'-' * 12}")
    out(flush.row(f"outbox flush, {args.intents} intents"))
    out(floor.row(f"raw sqlite floor, {args.intents} intents"))
    out(
        f"{'outbox beyond the floor':<46} {'':>9} {us(flush.wall_each - floor.wall_each):>13} {'':>10} "
        f"{us(flush.cpu_each - floor.cpu_each):>12}"
    )
    out(batched.row(f"outbox flush(limit={RUN_BATCH}) until dry, {args.intents} intents"))
    out(interleaved.row(f"interleaved: outbox, {args.intents} intents"))
    out(interleaved_floor.row(f"interleaved: raw sqlite floor, {args.intents} intents"))
    if start is not None:
        out(start.row(f"outbox start, {args.stale} stale intents adopted"))
    if decision_median is not None:
        out(
            f"{f'adoption decision, {args.listing}-message listing':<46} {'':>9} "
            f"{f'{decision_median * 1e3:.3f} ms':>13} {'/decision':>10}"
        )
    flush_each, floor_each = flush.wall_each, floor.wall_each
    out(f"load average at the end: {load()} (at the start: {load_at_start})")
    out(
        f"cpu ratio: {flush.cpu_each / floor.cpu_each:.2f} "
        "(flush CPU per intent over floor CPU per intent: steadier than wall on a busy machine)"
    )
    out(
        f"interleaved ratio: {interleaved_ratio:.2f} (the median of the interleaved runs' ratios: "
        "the disk's slow stretches fall on both sides alike)"
    )
    out(f"ratio: {flush_each / floor_each:.2f}")
    return 0


def _profile(args: argparse.Namespace, directory: Path, flush_template: Path, stale_template: Path) -> None:
    args.profile.mkdir(parents=True, exist_ok=True)
    jobs: list[tuple[str, Callable[[cProfile.Profile], Run]]] = [
        (
            "flush",
            lambda profiler: time_flush(
                copy_ledger(flush_template, directory / "profile-flush.sqlite3"), args.intents, profiler
            ),
        )
    ]
    if args.stale:
        jobs.append(
            (
                "start",
                lambda profiler: time_start(
                    copy_ledger(stale_template, directory / "profile-start.sqlite3"), args.stale, profiler
                ),
            )
        )
    for name, job in jobs:
        progress(f"profiling one more {name} (untimed)")
        profiler = cProfile.Profile()
        job(profiler)
        target = args.profile / f"{name}.pstats"
        profiler.dump_stats(target)
        progress(f"wrote {target}; the top of it by own time:")
        pstats.Stats(profiler, stream=sys.stderr).strip_dirs().sort_stats("tottime").print_stats(25)
