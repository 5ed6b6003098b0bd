"""``bin/connect standin``: serve a local Basecamp stand-in until SIGINT or SIGTERM, then exit 0.

The first line on stdout (``--help`` says what it names) is flushed at once, so a parent can read
it and go. A port it cannot listen on is exit ``EXIT_UNAVAILABLE``; a number out of bounds
(``--feed-delay``, ``--rate-limit``'s window: finite seconds up to a day) is a usage error."""

from __future__ import annotations

import argparse
import json
import signal
import time
from collections.abc import Callable
from typing import Any, TypeVar

from shell import process_secrets
from shell.basecamp.standin.faults import RateLimit, seconds
from shell.basecamp.standin.server import StandIn
from shell.basecamp.standin.world import WORLDS, World
from shell.cli.arguments import port, positive_integer
from shell.cli.main import Subparsers, add_command
from shell.errors import EXIT_OK, EXIT_UNAVAILABLE, UserError

T = TypeVar("T")

DESCRIPTION = """\
Serve a local Basecamp stand-in on 127.0.0.1: Basecamp's comments, boosts and Campfire
lines (flat and /buckets/... routes), its profile, pagination and errors, faithfully. For
the demo and for trying the connector without a Basecamp account.

The first line printed names the base URL, the account id, the agent's bearer token and
person id, the operator's person id (for setup --operator), the control secret, and the
world's projects, cards and Campfires (--json: as one JSON object; the secret is
"control_secret"). The control API answers only requests that carry the secret (SECRET
below): on a shared machine, whoever did not read the first line cannot drive it.
A person's mention of the agent, as Basecamp marks it up, from another terminal:
  curl -H "X-Standin-Secret: SECRET" -X POST BASE_URL/__standin/mentions \\
      -d '{"recording_id": CARD_ID, "text": "please look"}'
(the operator's, unless "creator_id" names another person; it answers the event's id).
Faults can be scripted from another terminal:
  curl -H "X-Standin-Secret: SECRET" -X POST BASE_URL/__standin/faults \\
      -d '{"action": "create_then_drop", "method": "POST"}'
removed, every one of them, with: curl -H "X-Standin-Secret: SECRET" -X DELETE BASE_URL/__standin/faults
and the requests it saw read back with: curl -H "X-Standin-Secret: SECRET" BASE_URL/__standin/requests
(secrets and OAuth codes in them read REDACTED)
Basecamp's rate limit is enforced (--rate-limit, default 50/10: 50 requests per 10 s per
client address, then 429 with Retry-After); change it while serving with
  curl -H "X-Standin-Secret: SECRET" -X PUT BASE_URL/__standin/rate-limit -d '{"requests": 0}'  (0: off)
The live lane (a ticket from POST ACCOUNT_URL/events/stream_ticket.json, then a WebSocket)
takes faults too: curl -H "X-Standin-Secret: SECRET" -X POST BASE_URL/__standin/live/faults \\
  -d '{"action": "drop"}'  (refuse, expire_ticket, drop, stall, skip; see
shell/basecamp/standin/faults.py).

It plays Launchpad too (OAuth 2, one registered app: client id standin-client, and the control
secret as its client secret; it consents as the agent at once), so a login can be tried:
  BASECAMP_CLIENT_SECRET=SECRET bin/connect login --launchpad BASE_URL \\
      --client-id standin-client --token-file /tmp/agent.token
Its tokens live two weeks, like Launchpad's, unless told otherwise:
  curl -H "X-Standin-Secret: SECRET" -X POST BASE_URL/__standin/launchpad -d '{"token_lifetime": 60}'
  curl -H "X-Standin-Secret: SECRET" -X POST BASE_URL/__standin/launchpad/expire   # every token expires now
Stops on Ctrl-C or SIGTERM, exiting 0."""


def register(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "standin", DESCRIPTION)
    parser.add_argument("--port", type=port, default=0,
                        help="port to listen on at 127.0.0.1 (default 0: any free port)")
    parser.add_argument("--world", choices=WORLDS, default="demo",
                        help="demo: three projects, the agent and two other people (default); "
                        "empty: one project, one card, one Campfire")
    parser.add_argument("--account", type=positive_integer, default=None, metavar="ID",
                        help="an account id of your own for the world (default: the world's, 5550001 for "
                        "demo); give one when someone else on this machine tries the stand-in too, so "
                        "your (account, agent) pairs differ")
    parser.add_argument("--feed-delay", type=_checked(lambda text: seconds(float(text), "the feed delay")),
                        default=0.0, metavar="SECONDS",
                        help="the poll lane (events.json) serves an event only this many seconds after it "
                        "happened, as Basecamp's does (about 30); the live lane is not delayed (default 0)")
    parser.add_argument("--json", action="store_true", help="print the first line as one JSON object")
    parser.add_argument("--rate-limit", type=_checked(RateLimit.parse), default=RateLimit(),
                        metavar="N/SECONDS|off", help="Basecamp's limit per client address, enforced with "
                        "429 and Retry-After (default 50/10, as Basecamp; off: none)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        standin = StandIn(world=args.world, port=args.port, rate_limit=args.rate_limit,
                          feed_delay=args.feed_delay, account_id=args.account)
    except OSError as error:
        raise UserError(f"cannot listen on 127.0.0.1:{args.port}: {error.strerror or error}",
                        EXIT_UNAVAILABLE) from error
    for secret in (standin.control_secret, *(person.token for person in standin.world.everyone)):
        process_secrets.hold(secret)  # said once, on the first line; never in a log line
    stop: list[int] = []  # the handler only notes: the main thread may hold a lock it would take
    previous = {number: signal.signal(number, lambda signum, frame: stop.append(signum))
                for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        with standin:
            summary = describe(standin)
            print(json.dumps(summary) if args.json else as_text(summary), flush=True)
            while not stop:
                time.sleep(0.2)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return EXIT_OK


def _checked(parse: Callable[[str], T]) -> Callable[[str], T]:
    """``parse``, its ValueError a usage error saying what is wrong."""

    def checked(text: str) -> T:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return checked


def describe(standin: StandIn) -> dict[str, Any]:
    world: World = standin.world
    return {
        "base_url": standin.base_url, "account_url": standin.account_url,
        "rate_limit": standin.limiter.limit.describe(), "account_id": world.account_id, "token": world.token,
        "control_secret": standin.control_secret, "agent_id": world.agent.id, "agent_name": world.agent.name,
        "operator_id": world.operator.id,
        "people": [{"id": person.id, "name": person.name, "token": person.token} for person in world.people],
        "projects": [{"id": project.id, "name": project.name, "cards": list(project.recording_ids),
                      "campfire": project.campfire_id} for project in world.projects]}


def as_text(summary: dict[str, Any]) -> str:
    projects = "; ".join(f"project {project['id']} cards {','.join(map(str, project['cards']))} campfire "
                         f"{project['campfire']}" for project in summary["projects"])
    return (
        f"Basecamp stand-in at {summary['base_url']} account {summary['account_id']} "
        f"token {summary['token']} agent {summary['agent_id']} operator {summary['operator_id']} "
        f"control secret {summary['control_secret']} rate limit {summary['rate_limit']}"
        f" | {projects}")
