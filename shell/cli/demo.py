"""``bin/connect demo``: the connector's main job, end to end, against a Basecamp stand-in.

It plays the five scenes (``shell.demo.play``); the connector is stopped whatever happens. The
demo's directory is removed after a pass unless ``--keep``, and kept (and said where) after a
failure. A stand-in, setup or connector that fails is one line on stderr, never a traceback."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.timestamps import format_duration
from shell.cli.main import Subparsers, add_command
from shell.demo.play import ConnectorFailed, StandInUnreachable, run_demo
from shell.demo.script import GUARD_DELAY, RECONCILE_AFTER
from shell.errors import EXIT_FAILURE, EXIT_OK, EXIT_UNAVAILABLE, UserError

DESCRIPTION = f"""\
Watch the connector do its main job, from nothing but this checkout, in about half a minute.

It starts a local Basecamp stand-in with a demo world (three projects; the agent; Ada, the
operator), writes a demo configuration in a temporary state directory (routes for two
projects, none for the third; timings shortened: guard delay {format_duration(GUARD_DELAY)}, reconcile after \
{format_duration(RECONCILE_AFTER)}), and
runs the connector (`bin/connect run`) with a bundled demo worker that speaks MCP to the
connector's dispatch tools, standing in for Claude Code (not needed). Then five scenes, each
one request by Ada mentioning the agent, narrated as they happen from the connector's ledger:

  1. a mention answered by the worker (its own boost and reply; the guard stands down)
  2. a slow worker, so the connector's guard boost goes out first
  3. a mention in a project with no route, so the holding reply goes out
  4. a worker that fails, so the completion notice names the event and the redispatch command
  5. the connector killed with SIGKILL while a notice's POST is in flight (the stand-in made
     the message and held back its answer), and restarted: reconciliation lists the
     destination and adopts the message; it is not posted again

It ends with what each place holds and one verdict line, judged from the stand-in's own record
of every POST (not from the ledger): messages posted, doubled (the same words twice at one
place, or two messages where a scene calls for one), missing (a message a scene calls for
that never came) and unexpected. Exit 0 only when doubled, missing and unexpected are all 0
and every scene happened as scripted; 1 otherwise (the demo's directory is then kept).

Against a stand-in of your own (to watch its record or script faults while the demo runs):
  bin/connect standin --json > standin.json &
  bin/connect demo --standin standin.json"""


def register(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "demo", DESCRIPTION)
    parser.add_argument("--standin", metavar="FILE", type=Path,
                        help="use a running stand-in: FILE holds the JSON line `bin/connect standin --json` "
                        "printed (default: start one with the demo world)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the demo's directory (configuration, ledger, log)")
    parser.add_argument("--json", action="store_true", help="no narration; one JSON object at the end")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    def say(line: str) -> None:
        if not args.json:
            print(line, flush=True)

    try:
        outcome = run_demo(args.standin, args.keep, say)
    except StandInUnreachable as error:
        raise UserError(str(error), EXIT_UNAVAILABLE) from None
    except ConnectorFailed as error:
        raise UserError(f"the demo's connector failed: {error}", EXIT_FAILURE) from None
    if args.json:
        print(json.dumps(outcome.to_json(), indent=2, ensure_ascii=False))
    return EXIT_OK if outcome.passed else EXIT_FAILURE

