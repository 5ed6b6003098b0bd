"""One ``bin/connect setup``'s changes, merged into the configuration file's mapping: every field
it is not told to change is kept, and the result is read by ``parse_configuration``. A change that
cannot apply (``--class`` for a project without a route, ``--remove-route`` for one that has none)
is a problem line naming the flag like any other; every problem is reported, the setup's first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from returns.result import Failure, Result, Success

from core import worker_allowances
from core.configuration import TIMING_KEYS, Configuration, parse_configuration, positive_id


@dataclass(frozen=True, slots=True)
class Changes:
    """What one ``bin/connect setup`` was told, as the text it was given. None: leave as is."""
    account_id: str | None = None
    base_url: str | None = None
    agent_id: str | None = None
    token_file: str | None = None
    operator_id: str | None = None
    trust_mode: str | None = None
    allow: tuple[str, ...] = ()
    remove_allow: tuple[str, ...] = ()
    routes: tuple[str, ...] = ()  # PROJECT=DIR
    remove_routes: tuple[str, ...] = ()  # PROJECT
    classes: tuple[str, ...] = ()  # PROJECT=NAME
    watch_completions: tuple[str, ...] = ()  # PROJECT
    no_watch_completions: tuple[str, ...] = ()  # PROJECT
    worker_command: tuple[str, ...] | None = None  # argv; () for the default worker
    concurrency: str | None = None
    task_deadline: str | None = None
    guard_delay: str | None = None
    still_running: str | None = None
    reconcile_after: str | None = None
    unsafe_test_timings: bool | None = None
    worker_env: tuple[str, ...] = ()  # names to add
    remove_worker_env: tuple[str, ...] = ()
    worker_bash: tuple[str, ...] = ()  # Bash patterns to allow (core.worker_allowances)
    remove_worker_bash: tuple[str, ...] = ()
    worker_mcp: tuple[str, ...] = ()  # MCP config files to add
    remove_worker_mcp: tuple[str, ...] = ()


def _assignment(text: str, flag: str, what: str, problems: list[str]) -> tuple[str, str] | None:
    project, sign, value = text.partition("=")
    if not sign or not project.strip() or not value:
        problems.append(f"{flag} {text!r}: expected PROJECT={what}")
        return None
    return project.strip(), value


def _project_key(text: str, flag: str, problems: list[str]) -> str | None:
    number = positive_id(text, f"{flag} {text!r}", problems)
    return None if number is None else str(number)


def _merge_trust(trust_value: Any, changes: Changes, problems: list[str]) -> dict[str, Any]:
    trust = dict(trust_value) if isinstance(trust_value, Mapping) else {}
    if changes.trust_mode is not None:
        trust["mode"] = changes.trust_mode
    if changes.operator_id is not None:
        trust["operator_id"] = changes.operator_id
    allow = list(trust.get("allow") or []) if isinstance(trust.get("allow"), list | None) else []
    for person in changes.allow:
        number = positive_id(person, f"--allow {person!r}", problems)
        if number is not None and number not in allow:
            allow.append(number)
    for person in changes.remove_allow:
        number = positive_id(person, f"--remove-allow {person!r}", problems)
        allow = [item for item in allow if item != number and str(item) != str(number)]
    trust["allow"] = allow
    return trust


def _merge_routes(routes_value: Any, changes: Changes, problems: list[str]) -> dict[str, Any]:
    routes: dict[str, Any] = {}
    if isinstance(routes_value, Mapping):
        for key, value in routes_value.items():
            routes[str(key)] = dict(value) if isinstance(value, Mapping) else value
    for text in changes.remove_routes:
        key = _project_key(text, "--remove-route", problems)
        if key is not None and routes.pop(key, None) is None:
            problems.append(f"--remove-route {text}: there is no route for project {key}")
    for text in changes.routes:
        found = _assignment(text, "--route", "DIR", problems)
        key = _project_key(found[0], "--route", problems) if found else None
        if found and key is not None:
            routes.setdefault(key, {})["directory"] = found[1]
    for text in changes.classes:
        found = _assignment(text, "--class", "NAME", problems)
        key = _project_key(found[0], "--class", problems) if found else None
        if found and key is not None:
            _set_on_route(routes, key, "class", found[1], f"--class {text}", problems)
    for flag, texts, watched in (
        ("--watch-completions", changes.watch_completions, True),
        ("--no-watch-completions", changes.no_watch_completions, False),
    ):
        for text in texts:
            key = _project_key(text, flag, problems)
            if key is not None:
                _set_on_route(routes, key, "watch_completions", watched, f"{flag} {text}", problems)
    return routes


def _set_on_route(  # noqa: PLR0917 -- a route's field, its value, and the flag that set it
    routes: dict[str, Any], key: str, name: str, value: Any, flag: str, problems: list[str]
) -> None:
    if key in routes:
        routes[key][name] = value
    else:
        problems.append(f"{flag}: there is no route for project {key} (add --route {key}=DIR)")


def merge(existing: Mapping[str, Any], changes: Changes) -> Result[Configuration, tuple[str, ...]]:
    problems: list[str] = []
    data = dict(existing) | _given(changes, _OVERRIDDEN)
    data["trust"] = _merge_trust(data.get("trust"), changes, problems)
    data["routes"] = _merge_routes(data.get("routes"), changes, problems)
    if changes.worker_command is not None:
        data["worker_command"] = list(changes.worker_command) or None
    if changes.concurrency is not None:
        text = changes.concurrency.strip()
        data["concurrency"] = int(text) if text.isdigit() else changes.concurrency
    timings = dict(data["timings"]) if isinstance(data.get("timings"), Mapping) else {}
    data["timings"] = timings | _given(changes, TIMING_KEYS)
    recorded = data.get("worker_env")
    kept: list[Any] = list(recorded) if isinstance(recorded, list) else []
    names = [name for name in [*kept, *changes.worker_env] if name not in changes.remove_worker_env]
    data["worker_env"] = [name for index, name in enumerate(names) if name not in names[:index]]
    data[worker_allowances.KEY] = worker_allowances.merged(
        data.get(worker_allowances.KEY), bash=changes.worker_bash, remove_bash=changes.remove_worker_bash,
        mcp=changes.worker_mcp, remove_mcp=changes.remove_worker_mcp,
    )
    parsed = parse_configuration(data)
    if problems:
        later = () if isinstance(parsed, Configuration) else parsed
        return Failure(tuple(problems) + tuple(line for line in later if line not in problems))
    return Success(parsed) if isinstance(parsed, Configuration) else Failure(parsed)


_OVERRIDDEN = ("account_id", "base_url", "agent_id", "token_file", "task_deadline", "unsafe_test_timings")


def _given(changes: Changes, keys: Sequence[str]) -> dict[str, Any]:
    """The changes to ``keys`` this setup was told (a field of ``Changes`` is named as its key)."""
    return {key: getattr(changes, key) for key in keys if getattr(changes, key) is not None}
