"""``bin/bench worker``: how long a person who mentions the agent waits for the worker's own
acknowledgement, with the real Claude Code as the worker and a scripted model that answers at once.

It starts the stand-in, a scripted Messages API (``tests.support.scripted_model``: zero latency,
a script of get_dispatch, ack_dispatch with the worker's words, complete_dispatch), and a real
``bin/connect run`` with the default worker command (the pinned Claude Code, ``bin/_claude_code``),
then mentions the agent ``--mentions`` times, one after another, each waiting for its worker to
end. Figures a mention, from recorded wall-clock times (the event's ``created_at`` on the
stand-in; the ledger's ``attempts.running_at`` and ``task_events.delivered_at``; the stand-in's
boost), none from polling:

  spawned    mention -> Claude Code's process is running
  acked      mention -> the worker's ack_dispatch is recorded
  boosted    mention -> the worker's acknowledgement is in Basecamp (a boost by the agent on the
             comment that asked), when the connector posts the worker's words; "-" otherwise

Beside them, in the same run: ``bare``, the wall time of a bare ``claude -p`` answering one word
against the same scripted model, ``--mentions`` times: the floor no connector can go under.
It prints p50 and p95 of each, and last ``worker: boosted_p50=X s boosted_p95=Y s bare_p50=Z s
ratio=R`` (``acked`` where nothing was boosted). Exit 1
when a mention was not acknowledged within the bound, or Claude Code is not installed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core.timestamps import parse_timestamp
from shell.basecamp.standin.server import StandIn
from shell.ledger.connection import open_ledger_read_only
from tests.bench.latency_bench import percentile
from tests.support.configured import configure_connector
from tests.support.scripted_model import ScriptedModel, Step

REPOSITORY = Path(__file__).resolve().parents[2]
CONNECT = str(REPOSITORY / "bin" / "connect")
CLAUDE = REPOSITORY / ".claude-code" / "node_modules" / ".bin" / "claude"
DEFAULT_MENTIONS = 5
BOUND_SECONDS = 60.0
SCRIPT = [
    Step("get_dispatch"),
    Step("ack_dispatch", {"text": "On it"}),
    Step("complete_dispatch", {"outcome": "succeeded", "reply": "Done.", "links": []}),
    Step(text="Done."),
]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "worker",
        help="mention -> the real Claude Code's acknowledgement in Basecamp, beside a bare claude -p (last line: p50)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Defaults take about half a minute. Progress goes to stderr.",
    )
    parser.add_argument("--mentions", type=int, default=DEFAULT_MENTIONS, metavar="N",
                        help=f"mentions, and bare starts (default {DEFAULT_MENTIONS})")  # fmt: skip
    parser.set_defaults(run=run)


def _environment(home: Path, model: ScriptedModel) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    environment = {key: value for key, value in os.environ.items() if key != "CONNECTOR_PAUSE_AT"}
    environment.update(
        PATH=f"{CLAUDE.parent}{os.pathsep}{environment.get('PATH', '')}",
        HOME=str(home),
        ANTHROPIC_BASE_URL=model.base_url,
        ANTHROPIC_API_KEY="sk-scripted-model",
    )
    return environment


def run(args: argparse.Namespace) -> int:
    if not CLAUDE.exists():
        print(f"Claude Code is not installed at {CLAUDE}: run bin/test once (it installs it)", file=sys.stderr)
        return 1
    mentions = max(1, args.mentions)
    with tempfile.TemporaryDirectory(prefix="bench-worker-") as directory:
        root = Path(directory)
        os.chmod(root, 0o700)
        with ScriptedModel(script=[Step(text="hi")]) as bare_model:
            bare = [_bare_start(_environment(root / "bare-home", bare_model), root) for _ in range(mentions)]
        with ScriptedModel(script=SCRIPT) as model, StandIn(world="demo") as standin:
            figures = _mentions(standin, root, _environment(root / "home", model), mentions)
    if figures is None:
        return 1
    print(f"{'figure':<10} {'p50 s':>8} {'p95 s':>8}")
    for name, values in (*figures.items(), ("bare", bare)):
        if values:
            print(f"{name:<10} {percentile(values, 50):>8.2f} {percentile(values, 95):>8.2f}")
        else:
            print(f"{name:<10} {'-':>8} {'-':>8}")
    name = "boosted" if figures["boosted"] else "acked"  # in Basecamp, once the connector posts it
    waited, floor = figures[name], percentile(bare, 50)
    print(
        f"worker: {name}_p50={percentile(waited, 50):.2f} s {name}_p95={percentile(waited, 95):.2f} s "
        f"bare_p50={floor:.2f} s ratio={percentile(waited, 50) / floor:.2f}"
    )
    return 0


def _bare_start(environment: dict[str, str], root: Path) -> float:
    started = time.monotonic()
    subprocess.run(
        [str(CLAUDE), "-p", "--output-format", "json", "say hi"],
        env=environment, cwd=root, capture_output=True, timeout=BOUND_SECONDS, check=True,
    )  # fmt: skip
    return time.monotonic() - started


def _mentions(
    standin: StandIn, root: Path, environment: dict[str, str], mentions: int
) -> dict[str, list[float]] | None:
    with contextlib.redirect_stdout(sys.stderr):
        state = configure_connector(
            standin, root, "--worker-env", "ANTHROPIC_BASE_URL", "--worker-env", "ANTHROPIC_API_KEY",
            default_worker=True,
        )  # fmt: skip
    command = [CONNECT, "run", "--state-dir", str(state)]
    process = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    figures: dict[str, list[float]] = {"spawned": [], "acked": [], "boosted": []}
    try:
        assert process.stdout is not None
        process.stdout.readline()  # "running ..."
        time.sleep(2.0)  # the live lane connects
        card = standin.world.projects[0].recording_ids[0]
        for number in range(mentions):
            event_id = standin.mention(standin.world.people[0], card, f"worker bench {number}")
            measured = _wait_for(state, standin, event_id)
            if measured is None:
                print(f"  event {event_id} was not acknowledged in time", file=sys.stderr)
                return None
            print(f"  event {event_id}: " + ", ".join(f"{name} {value:.2f} s" for name, value in measured.items()),
                  file=sys.stderr)  # fmt: skip
            for name, value in measured.items():
                figures[name].append(value)
        return figures
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for(state: Path, standin: StandIn, event_id: int) -> dict[str, float] | None:
    event = next(event for event in standin.feed.events() if event.id == event_id)
    mentioned = event.created_at
    agent = standin.world.agent.id
    deadline = time.monotonic() + BOUND_SECONDS
    while time.monotonic() < deadline:
        with open_ledger_read_only(state / "ledger.sqlite3") as ledger, ledger.read() as connection:
            row = connection.execute(
                "SELECT a.running_at, te.delivered_at, a.state FROM task_events te"
                " JOIN attempts a ON a.id = te.exposed_attempt_id WHERE te.event_id = ?",
                (event_id,),
            ).fetchone()
        if row is not None and row[0] and row[1] and row[2] == "ended":
            measured = {
                name: (parse_timestamp(str(stamp)) - mentioned).total_seconds()
                for name, stamp in (("spawned", row[0]), ("acked", row[1]))
            }
            boosts = [
                boost for boost in standin.messages("boost", event.recording_id) if boost["booster"]["id"] == agent
            ]
            if boosts:
                measured["boosted"] = (parse_timestamp(str(boosts[-1]["created_at"])) - mentioned).total_seconds()
            return measured
        time.sleep(0.1)
    return None
