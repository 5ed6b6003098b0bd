"""What a re-read configuration file authorizes the running connector to do.

The connector re-reads its file every ``RELOAD_EVERY``. A file that parses and names the running
account and agent authorizes exactly its routes: routes change without a restart; a change to
the rest (trust, worker, timings, token, base URL) waits for one, and ``pending`` says so. A file
unreadable, invalid, or naming another pair authorizes nothing until it is usable again: nothing
is dispatched and a request is ``blocked(config_unreadable)``, never answered as if unrouted.
``news`` is a line to log only when what is authorized changed, so an unusable file is logged
once, not every 2 s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from core.configuration import Configuration, Route, parse_configuration

RELOAD_EVERY = timedelta(seconds=2)


@dataclass(frozen=True, slots=True)
class Authorization:
    usable: bool
    routes: tuple[Route, ...] = ()
    problem: str = ""
    pending: str = ""  # a change the file makes that takes a restart

    @property
    def routed_projects(self) -> frozenset[int]:
        return frozenset(route.project_id for route in self.routes)

    @property
    def watched_projects(self) -> frozenset[int]:
        return frozenset(route.project_id for route in self.routes if route.watch_completions)


def at_start(configuration: Configuration) -> Authorization:
    return Authorization(usable=True, routes=configuration.routes)


def authorize(running: Configuration, read: Mapping[str, Any] | str) -> Authorization:
    """``read``: the file's JSON object, or why it could not be read."""
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
