"""What a re-read configuration file authorizes the running connector to do.

The running connector re-reads its configuration every ``RELOAD_EVERY``; this decides, from the
configuration it started with and what the file holds now, which projects it may serve.

Rules:
1. A file that parses and names the running account and agent authorizes exactly its routes
   (``Authorization.routes``): routes change without a restart.
2. A file unreadable, invalid, or naming another account or agent authorizes nothing (``usable``
   False) until usable again: nothing is dispatched and a request is
   ``blocked(config_unreadable)``, never answered as if unrouted. ``problem`` says why.
3. Only the routes are taken from a re-read file; a change to the rest (trust, worker, timings,
   token, base URL) needs a restart, and ``pending`` says so, one line.
4. ``news`` is a line to log only when what is authorized changed, so an unusable file is logged
   once, not every 2 s.
5. Pure: the shell hands over the file's mapping, or the one line saying why it could not."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from core.configuration import Configuration, Route, parse_configuration

RELOAD_EVERY = timedelta(seconds=2)


@dataclass(frozen=True, slots=True)
class Authorization:
    """Which projects the running connector may serve, by what the file said last."""

    usable: bool
    routes: tuple[Route, ...] = ()
    problem: str = ""
    pending: str = ""  # a change the file makes that takes a restart (rule 3)

    @property
    def routed_projects(self) -> frozenset[int]:
        return frozenset(route.project_id for route in self.routes)

    @property
    def watched_projects(self) -> frozenset[int]:
        return frozenset(route.project_id for route in self.routes if route.watch_completions)


def at_start(configuration: Configuration) -> Authorization:
    """What the configuration the connector started with authorizes: its routes."""
    return Authorization(usable=True, routes=configuration.routes)


def authorize(running: Configuration, read: Mapping[str, Any] | str) -> Authorization:
    """What the re-read file authorizes: ``read`` is its JSON object, or why it could not be
    read (rules 1-3)."""
    if isinstance(read, str):
        return Authorization(usable=False, problem=f"the configuration file cannot be read: {read}")
    parsed = parse_configuration(read)
    if not isinstance(parsed, Configuration):
        problems = parsed
        first = problems[0] if problems else "it does not validate"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return Authorization(usable=False, problem=f"the configuration file is invalid: {first}{more}")
    now = parsed
    if (now.account_id, now.agent_id) != (running.account_id, running.agent_id):
        return Authorization(
            usable=False,
            problem=(
                f"the configuration file names account {now.account_id} and agent {now.agent_id}, "
                f"not this connector's account {running.account_id} and agent {running.agent_id}"
            ),
        )
    unchanged = (now.base_url, now.token_file, now.trust, now.worker_command, now.concurrency,
                 now.task_deadline, now.timings)  # fmt: skip
    started = (running.base_url, running.token_file, running.trust, running.worker_command,
               running.concurrency, running.task_deadline, running.timings)  # fmt: skip
    pending = "" if unchanged == started else "a change besides the routes takes effect at the next start"
    return Authorization(usable=True, routes=now.routes, pending=pending)


def news(before: Authorization, after: Authorization) -> tuple[str, ...]:
    """The lines to log when ``after`` replaces ``before``; none when nothing changed (rule 4)."""
    lines: list[str] = []
    if not after.usable:
        if before.usable or before.problem != after.problem:
            lines.append(f"{after.problem}: it authorizes nothing until it is usable again")
        return tuple(lines)
    if not before.usable:
        lines.append("the configuration file is usable again")
    if after.routes != before.routes:
        served = ",".join(str(project) for project in sorted(after.routed_projects)) or "none"
        lines.append(f"routes reloaded: serving projects {served}")
    if after.pending and after.pending != before.pending:
        lines.append(after.pending)
    return tuple(lines)
