"""``bin/connect status``: what the connector is doing, read beside it without disturbing it.

The ledger is opened read-only in one read transaction (``shell.ledger.status``) and the instance
lock is never taken (``--help`` says what is shown, and the exit codes). Whether a connector runs
is the lock file's metadata (``shell.state.lock.peek``) with the pid's presence and the
configuration problem it names; while that process is present, a loop not turning is named from
the heartbeats beside the ledger. Nothing secret is printed: never the token (its file is not
read), a feed position or a body. A disk nearly full where the ledger lives, and a write the
running connector saw fail (``shell.ledger.connection``) until one succeeds, are in the
summary: both would otherwise show only in its log. A shadow ``--state-dir`` shows the shadow run
as ``--shadow`` does: its own lock and ledger, with the state directory's configuration."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path

from core import intake_status
from core.file_kinds import CONFIG_NAME
from core.heartbeats import beats_line, beats_report, not_turning, start_line, start_report, start_stuck
from core.presentation import short_time
from core.presentation import status_values as values
from core.presentation.status_report import lines, report
from shell import heartbeats
from shell.cli.arguments import add_state_arguments
from shell.cli.main import Subparsers, add_command
from shell.errors import EXIT_CONFIG, EXIT_OK, UserError
from shell.ledger.connection import disk_space, open_ledger_read_only, read_write_failure
from shell.ledger.intake import read_intake_status, read_lane_state, read_loss_counts
from shell.ledger.status import read_snapshot
from shell.metrics import metrics_text, pair_labels
from shell.state.config import SHADOW_DIRECTORY, StatePaths, load_config, locate_state
from shell.state.lock import peek, peek_only
from shell.worker.allowances import allowances_told

DESCRIPTION = f"""\
Show what the connector is doing, from its ledger, without disturbing it.

Status only reads: it opens the ledger read-only, never creates or migrates one, and takes no
lock, so it is safe beside a running connector (and beside none). What it shows:

  summary            one line first: running or not, live tasks, indeterminate messages,
                     blocked records (and refused messages, held records, a hold, if any)
  lock file          who the lock file says holds the instance lock: its pid, and whether
                     that process is present. Diagnostic only: status takes no lock, and a
                     connector killed with SIGKILL leaves its lock file behind. When the
                     running connector's re-read configuration file is unusable (unreadable,
                     invalid, or naming another account or agent), it says why here: that
                     connector authorizes nothing until the file is usable again
  disk               the free space where the ledger lives; a disk nearly full is in the
                     summary too (the connector's writes fail there first)
  ledger writes      a write the running connector saw fail (disk full, read-only, damaged):
                     when, why and its pid, in the summary too, until its next write succeeds
  hold               whether a person holds the connector (nothing dispatched or posted)
  feed               whether a feed position is kept (never the position itself) and the
                     last event served
  live lane          whether intake hears events live (the WebSocket) or polls alone: its
                     state, since when, why it is down, connects and overflows (STUCK when
                     a running connector's lane connects for longer than a connect takes)
  inbox lane         the agent's inbox (what was addressed to it, kept 30 days): available,
                     not for this principal (a 403: intake hears by the feed and the live lane
                     alone) or failing, and why; whether its position is kept, when it last read
  first heard by     per lane (feed, live, repair, inbox): when it last brought an event no
                     other lane had, and how many in all ("never" for none yet)
  loops              while a connector runs: whether each of its loops (intake, dispatch,
                     outbox, live, config) still turns, and when one that does not last did;
                     during its start, the step under way instead (NEVER FINISHED after 3 min)
  losses             stretches the live lane did not hear (open, repaired by a walk of the
                     feed, or unrecovered after 10 minutes) and gaps the feed itself skipped
  lifecycle messages how many of the connector's own messages are in each state, what waits
                     to be posted by kind, and how many a standing hold keeps back
  records            how many records are in each state (seen: read, no verdict yet);
                     blocked ones by reason
  live tasks         tasks holding a conversation, with their worker's attempt and pid
  waiting            lifecycle messages only a person can move on: indeterminate ones (the
                     connector cannot tell whether they were posted) and refused ones;
                     decide with bin/outbox-resolve
  held records       records held for a person, with their recording's URL
  not yet running    blocked, admitted and queued records by event id (the oldest
                     {values.LAST_WAITING_RECORDS}), each with its reason and what it waits for (a retry,
                     a person, the hold, a worker slot), and only the decisions the rules accept:
                     a blocked one takes redispatch or discard, one waiting to run only discard
  dispatches         the last {values.LAST_DISPATCHES} worker runs, newest first: stop reason, and each
                     event's delivery and outcome (succeeded, failed, or unknown: the worker
                     may have acted)

The state directory is found as `run` finds it: --state-dir, or --account and --agent, or
the only one configured. The token is never read or shown.

Examples:
  bin/connect status
  bin/connect status --account 999 --agent 42
  bin/connect status --state-dir ~/.local/state/basecamp-connector/999-42 --json
  bin/connect status --shadow        # what a shadow run (run --shadow) admitted and would do

exit codes: 0 shown; 3 no state directory, configuration or usable ledger (missing, too new,
not yet migrated, unreadable); 6 the ledger stayed busy."""


def register(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "status", DESCRIPTION)
    add_state_arguments(parser)
    parser.add_argument("--shadow", action="store_true", help="show the shadow run's ledger (run --shadow, "
                        "in <state>/shadow/): what it would do")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (keys: see core/presentation/status_report.py)")
    parser.add_argument("--prometheus", action="store_true",
                        help="print the metrics in Prometheus's text format instead (see the README's "
                             "\"Metrics and alerts\"; run --metrics-file keeps them in a file)")
    parser.set_defaults(run=run)


def _disk(directory: Path) -> values.Disk | None:
    measured = disk_space(directory)
    return None if measured is None else values.Disk(*measured)


def _where(paths: StatePaths, shadow: bool) -> tuple[StatePaths, Path]:
    """The state (or shadow) directory to show, and the configuration that names it."""
    if shadow:
        return StatePaths.at(paths.directory / SHADOW_DIRECTORY), paths.config
    outer = paths.directory.parent / CONFIG_NAME
    if paths.directory.name == SHADOW_DIRECTORY and not paths.config.exists() and outer.exists():
        return paths, outer
    return paths, paths.config


def _print_metrics(paths: StatePaths, account_id: int, agent_id: int) -> int:
    holder = peek(paths.directory, account_id, agent_id)
    running = holder is not None and bool(holder.pid_present)
    beats = heartbeats.read(paths.ledger) if running else None
    try:
        with open_ledger_read_only(paths.ledger) as read_only:
            text = metrics_text(read_only, pair_labels(account_id, agent_id), datetime.now(UTC),
                                running=running, beats=beats)
    except sqlite3.DatabaseError as error:
        raise UserError(f"{paths.ledger}: the ledger could not be read: {error}", EXIT_CONFIG) from error
    sys.stdout.write(text)
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    paths, config = _where(locate_state(args.state_dir, args.account, args.agent), args.shadow)
    if not paths.directory.is_dir():
        raise UserError(f"no state directory at {paths.directory}: run bin/connect setup, then bin/connect "
                        f"run{' --shadow' if args.shadow else ''}", EXIT_CONFIG)
    configuration = load_config(config)
    if args.prometheus:
        return _print_metrics(paths, configuration.account_id, configuration.agent_id)
    holder = peek(paths.directory, configuration.account_id, configuration.agent_id)
    try:
        with open_ledger_read_only(paths.ledger) as ledger:
            lane, losses = read_lane_state(ledger), read_loss_counts(ledger)
            news, inbox = read_intake_status(ledger)
            snapshot = read_snapshot(ledger)
    except sqlite3.DatabaseError as error:
        raise UserError(f"{paths.ledger}: the ledger could not be read: {error}", EXIT_CONFIG) from error
    holder = holder or peek_only(paths.directory)  # the file names other ids since it started
    lock_file = None if holder is None else values.LockFile(
        holder.pid, holder.started_at, values.pid_status(holder.pid_present), holder.configuration_problem)
    status = values.Status(
        account_id=configuration.account_id, agent_id=configuration.agent_id, state_dir=str(paths.directory),
        ledger_path=str(paths.ledger), lock_file=lock_file, ledger=snapshot,
        unsafe_test_timings=configuration.unsafe_test_timings,
        worker_allowed=allowances_told(configuration), disk=_disk(paths.directory),
        write_failure=read_write_failure(paths.ledger))  # fmt: skip
    running = holder is not None and holder.pid_present
    beats = heartbeats.read(paths.ledger) if running else None
    now = datetime.now(UTC)
    shadow = config != paths.config
    if args.json:
        shown_json = {**report(status), "shadow": shadow, "live_lane": intake_status.lane_report(lane),
                      "losses": intake_status.losses_report(losses),
                      "intake": intake_status.intake_report(news, inbox),
                      "loops": None if beats is None else beats_report(beats, now),
                      "start": None if beats is None else start_report(beats, now),
                      "live_lane_stuck": running and intake_status.stuck_connecting(lane, now)}  # fmt: skip
        print(json.dumps(shown_json, ensure_ascii=False, indent=2))
        return EXIT_OK
    shown = lines(status)
    if shadow:
        shown[0] = f"shadow run (admits and logs; dispatches and posts nothing) · {shown[0]}"
    at = next((at for at, line in enumerate(shown) if line.startswith("lifecycle messages: ")), len(shown))
    judged = now if running else None  # a lane's state outlives the connector that wrote it
    shown[at:at] = [intake_status.lane_line(lane, short_time, now=judged),
                    intake_status.inbox_line(inbox, short_time), intake_status.news_line(news, short_time),
                    intake_status.losses_line(losses)]
    if running and intake_status.stuck_connecting(lane, now):
        shown[0] += "; live lane STUCK connecting"
    if beats is not None:
        starting = start_line(beats, now)
        shown.insert(at + 4, starting or beats_line(beats, now))  # after the lanes, the inbox and the losses
        if start_stuck(beats, now):
            shown[0] += "; the start NEVER FINISHED"
        if stalled := not_turning(beats, now):
            shown[0] += f"; NOT TURNING: {', '.join(stalled)}"
    print("\n".join(shown))
    return EXIT_OK

