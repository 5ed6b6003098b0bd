"""The connector's configuration for one (account, agent): a value, its defaults, its checks.

``parse_configuration`` answers a ``Configuration`` or every problem, each a line naming its key
(and the flag that sets it), never a traceback; a tuple, not a ``Result``: ``status`` reads the
configuration, and importing ``returns`` was a tenth of its start. Only the account id, base URL,
agent id and token file have no default. No secret is a value here: the token is named by its
file, ``worker_env`` holds names. Paths are checked as text; the shell checks a route's directory.

Timings are held to their floors: a ``sending`` message is listed no sooner than a minute after
its request (it may still be landing); a guard waits at least 10 s for the worker's own
acknowledgement; still-running notices are at least a minute apart, a task's deadline at least a
minute, and the feed is read at most once a second. Only ``unsafe_test_timings`` (``setup
--unsafe-test-timings``, shown by ``status`` and ``setup``) lifts them, for the demo and the
tests: a file written by hand is held to them when it is read.

A route's directory must exist, be a directory, reach none of the connector's own paths
(``core.route_reach``), and be writable (and searchable) by this user, in that order; the first
it is not is its one problem, in the same words for ``setup`` (refused), ``run`` (no start: its
requests would end in a public "could not be started") and ``doctor``.

The running connector re-reads its file every ``RELOAD_EVERY``. A file that parses and names the
running pair authorizes exactly its routes: routes change without a restart, the rest waits for
one (``pending`` says so). A file unreadable, invalid, naming another pair, or routing a project
to a directory that reaches the connector's own paths authorizes nothing until it is usable
again: a request is ``blocked(config_unreadable)``, never answered as if unrouted. ``news`` is
what to log when what is authorized changed, so an unusable file once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import SplitResult, urlsplit

from core import worker_allowances
from core.ids import MAX_ID, id_digits
from core.links import transport_allowed
from core.route_reach import OwnPath, reached
from core.timestamps import format_duration, parse_duration
from core.worker_allowances import WorkerAllowances, variable_name_problem

VERSION = 1
MAX_CONCURRENCY = 64


class TrustMode(StrEnum):
    """Whose mentions the agent takes. Assignments are the operator's alone in every mode."""
    operator = "operator"  # the operator alone
    allowlist = "allowlist"  # the operator and the allowed people
    project = "project"  # the operator and any non-client member of the event's project


@dataclass(frozen=True, slots=True)
class Trust:
    """Whose requests the agent acts on: the mode, its operator, the people allowed."""
    mode: TrustMode = TrustMode.operator
    operator_id: int | None = None
    allow: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Route:
    """A project's approved directory: the only authority for where its work runs."""
    project_id: int
    directory: str
    work_class: str = ""
    watch_completions: bool = False


@dataclass(frozen=True, slots=True)
class Timings:
    """When the lifecycle messages fall due and when a sending intent is reconciled."""
    guard_delay: timedelta = timedelta(seconds=30)
    still_running: timedelta = timedelta(minutes=10)
    reconcile_after: timedelta = timedelta(seconds=60)


@dataclass(frozen=True, slots=True)
class Configuration:
    account_id: int
    base_url: str
    agent_id: int
    token_file: str
    trust: Trust = field(default_factory=Trust)
    routes: tuple[Route, ...] = ()
    worker_command: tuple[str, ...] | None = None  # None: the default worker (Claude Code)
    concurrency: int = 2
    task_deadline: timedelta = timedelta(minutes=90)
    timings: Timings = field(default_factory=Timings)
    unsafe_test_timings: bool = False  # lifts every timing floor (demo, tests)
    worker_env: tuple[str, ...] = ()  # variable names passed to the worker as they are
    worker_allow: WorkerAllowances = field(default_factory=WorkerAllowances)  # beyond its defaults

    def route(self, project_id: int) -> Route | None:
        return next((route for route in self.routes if route.project_id == project_id), None)


# The top-level keys of the JSON file, and the flag that sets each (for the problem lines).
KEYS: dict[str, str] = {
    "version": "",
    "account_id": "--account ID",
    "base_url": "--base-url URL",
    "agent_id": "--agent ID",
    "token_file": "--token-file PATH",
    "trust": "--trust MODE / --operator ID / --allow ID",
    "routes": "--route PROJECT=DIR",
    "worker_command": "--worker-command '...'",
    "concurrency": "--concurrency N",
    "task_deadline": "--deadline DURATION",
    "timings": "--guard-delay / --still-running / --reconcile-after",
    "unsafe_test_timings": "--unsafe-test-timings",
    "worker_env": "--worker-env NAME",
    worker_allowances.KEY: "--worker-allow-bash PATTERN / --worker-mcp FILE",
}
TRUST_KEYS = ("mode", "operator_id", "allow")
ROUTE_KEYS = ("directory", "class", "watch_completions")
TIMING_KEYS = ("guard_delay", "still_running", "reconcile_after")

FLOORS: Mapping[str, timedelta] = {
    "timings.reconcile_after": timedelta(seconds=60),
    "timings.guard_delay": timedelta(seconds=10),
    "timings.still_running": timedelta(minutes=1),
    "task_deadline": timedelta(minutes=1),
    "--poll-seconds": timedelta(seconds=1),
}


def below_floor(where: str, value: timedelta, *, unsafe: bool) -> str | None:
    floor = FLOORS[where]
    if unsafe or value >= floor:
        return None
    return (
        f"{where}: at least {format_duration(floor)} (the reference's floor), not {format_duration(value)};"
        " shorter only for a demo or a test, with setup --unsafe-test-timings"
    )


# -- reading --------------------------------------------------------------------------------
def positive_id(value: Any, where: str, problems: list[str]) -> int | None:
    if isinstance(value, bool):
        problems.append(f"{where}: expected a positive integer id, not {value!r}")
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and id_digits(value.strip()) is not None:
        number = int(value.strip())
    else:
        problems.append(f"{where}: expected a positive integer id, not {_shown(value)}")
        return None
    if not 0 < number <= MAX_ID:
        problems.append(f"{where}: expected a positive integer id up to {MAX_ID}, not {number}")
        return None
    return number


def _duration(value: Any, where: str, problems: list[str]) -> timedelta | None:
    parsed = parse_duration(value) if isinstance(value, str) else None
    if parsed is None:
        problems.append(f"{where}: expected a positive duration up to a year, like 90m, 30s, 2h or 1h30m, "
                        f"not {_shown(value)}")
    return parsed


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _unknown(mapping: Mapping[str, Any], known: Sequence[str], where: str, problems: list[str]) -> None:
    listed = ", ".join(known)
    problems.extend(f"{where}{key}: unknown key (known: {listed})" for key in mapping if key not in known)


def _base_url(value: Any, problems: list[str]) -> str | None:
    url = value.strip().rstrip("/") if isinstance(value, str) else ""
    try:
        parts: SplitResult | None = urlsplit(url)
    except ValueError:  # a bracketed host that is no IPv6 address
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        problems.append(f"base_url: expected a URL like https://3.basecampapi.com, not {_shown(value)}")
        return None
    if parts.path or parts.query or parts.fragment or parts.username or parts.password:
        problems.append(f"base_url: expected an origin without a path (https://3.basecampapi.com), not {url}")
        return None
    if not transport_allowed(url):
        problems.append(f"base_url: Basecamp must be reached over https (http only to a loopback host): "
                        f"{url}")  # fmt: skip
        return None
    return url


def _absolute_path(value: Any, where: str, problems: list[str]) -> str | None:
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where}: expected an absolute path, not {_shown(value)}")
        return None
    if "\x00" in value or "\n" in value:
        problems.append(f"{where}: a path cannot contain a NUL or a newline")
        return None
    if not PurePosixPath(value).is_absolute():
        problems.append(f"{where}: expected an absolute path, not {value!r}")
        return None
    return value


def _trust(value: Any, problems: list[str]) -> Trust:
    if value is None:
        return Trust()
    if not isinstance(value, Mapping):
        problems.append(f"trust: expected an object with {', '.join(TRUST_KEYS)}, not {_shown(value)}")
        return Trust()
    _unknown(value, TRUST_KEYS, "trust.", problems)
    mode = TrustMode.operator
    raw_mode = value.get("mode", mode.value)
    if raw_mode in tuple(TrustMode):  # a tuple: a list or an object from JSON is no key
        mode = TrustMode(raw_mode)
    else:
        problems.append(f"trust.mode: expected one of {', '.join(TrustMode)}, not {_shown(raw_mode)}")
    raw_operator = value.get("operator_id")
    operator_id = None if raw_operator is None else positive_id(raw_operator, "trust.operator_id", problems)
    allow: list[int] = []
    raw_allow = value.get("allow", [])
    if not isinstance(raw_allow, list):
        problems.append(f"trust.allow: expected a list of person ids, not {_shown(raw_allow)}")
    else:
        for index, item in enumerate(raw_allow):
            person = positive_id(item, f"trust.allow[{index}]", problems)
            if person is not None and person not in allow:
                allow.append(person)
    return Trust(mode, operator_id, tuple(allow))


def _routes(value: Any, problems: list[str]) -> tuple[Route, ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        problems.append(f"routes: expected an object of project id -> route, not {_shown(value)}")
        return ()
    routes = (_route(key, raw, problems) for key, raw in value.items())
    return tuple(sorted((route for route in routes if route is not None), key=lambda route: route.project_id))


def _route(key: Any, raw: Any, problems: list[str]) -> Route | None:
    project = positive_id(key, f"routes: project {key!r}", problems)
    where = f"routes.{key}"
    if not isinstance(raw, Mapping):
        problems.append(f"{where}: expected an object with {', '.join(ROUTE_KEYS)}, not {_shown(raw)}")
        return None
    _unknown(raw, ROUTE_KEYS, f"{where}.", problems)
    directory = None
    if "directory" not in raw:
        problems.append(f"{where}.directory: missing (--route {key}=DIR)")
    else:
        directory = _absolute_path(raw.get("directory"), f"{where}.directory", problems)
    work_class = raw.get("class", "")
    if not isinstance(work_class, str) or "\n" in work_class:
        problems.append(f"{where}.class: expected one line of text, not {_shown(work_class)}")
        work_class = ""
    watch = raw.get("watch_completions", False)
    if not isinstance(watch, bool):
        problems.append(f"{where}.watch_completions: expected true or false, not {_shown(watch)}")
        watch = False
    if project is None or directory is None:
        return None
    return Route(project, directory, work_class.strip(), watch)


def _worker_command(value: Any, problems: list[str]) -> tuple[str, ...] | None:
    if value is None:
        return None
    argv = value if isinstance(value, list) and all(isinstance(item, str) for item in value) else []
    if not argv or not argv[0].strip():
        problems.append(f"worker_command: expected a non-empty list of arguments (argv), not {_shown(value)}")
        return None
    return tuple(argv)


def _timings(value: Any, problems: list[str]) -> Timings:
    if value is None:
        return Timings()
    if not isinstance(value, Mapping):
        problems.append(f"timings: expected an object with {', '.join(TIMING_KEYS)}, not {_shown(value)}")
        return Timings()
    _unknown(value, TIMING_KEYS, "timings.", problems)
    found = {}
    for key in TIMING_KEYS:
        if key in value:
            parsed = _duration(value[key], f"timings.{key}", problems)
            if parsed is not None:
                found[key] = parsed
    return Timings(**found)


def _floors(task_deadline: timedelta, timings: Timings, unsafe: Any, problems: list[str]) -> bool:
    if not isinstance(unsafe, bool):
        problems.append(f"unsafe_test_timings: expected true or false, not {_shown(unsafe)}")
        unsafe = False
    timed = [(f"timings.{key}", getattr(timings, key)) for key in TIMING_KEYS]
    for where, value in [("task_deadline", task_deadline), *timed]:
        line = below_floor(where, value, unsafe=unsafe)
        if line is not None:
            problems.append(line)
    return bool(unsafe)


def _worker_env(value: Any, problems: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        problems.append(f"worker_env: expected a list of variable names, not {_shown(value)}")
        return ()
    names = []
    for name in value:
        line = variable_name_problem(name)
        if line is not None:
            problems.append(f"worker_env: {line}")
        elif name not in names:
            names.append(name)
    return tuple(names)


def parse_configuration(data: Any) -> Configuration | tuple[str, ...]:
    if not isinstance(data, Mapping):
        return (f"expected a JSON object, not {type(data).__name__}",)
    problems: list[str] = []
    _unknown(data, tuple(KEYS), "", problems)
    version = data.get("version", VERSION)
    if version != VERSION:
        problems.append(f"version: this program reads version {VERSION}, not {_shown(version)}")
    unset = [key for key in ("account_id", "base_url", "agent_id", "token_file") if data.get(key) is None]
    problems.extend(f"{key}: missing ({KEYS[key]})" for key in unset)
    account_id = None if "account_id" in unset else positive_id(data["account_id"], "account_id", problems)
    agent_id = None if "agent_id" in unset else positive_id(data["agent_id"], "agent_id", problems)
    base_url = None if "base_url" in unset else _base_url(data["base_url"], problems)
    token_file = None if "token_file" in unset else _absolute_path(data["token_file"], "token_file", problems)
    trust = _trust(data.get("trust"), problems)
    routes = _routes(data.get("routes"), problems)
    worker_command = _worker_command(data.get("worker_command"), problems)
    concurrency = data.get("concurrency", 2)
    if type(concurrency) is not int or not 1 <= concurrency <= MAX_CONCURRENCY:  # a bool is no number here
        problems.append(f"concurrency: expected a whole number from 1 to {MAX_CONCURRENCY}, "
                        f"not {_shown(concurrency)}")
    raw_deadline = data.get("task_deadline", "90m")
    task_deadline = _duration(raw_deadline, "task_deadline", problems) or timedelta(minutes=90)
    timings = _timings(data.get("timings"), problems)
    unsafe = _floors(task_deadline, timings, data.get("unsafe_test_timings", False), problems)
    worker_env = _worker_env(data.get("worker_env"), problems)
    worker_allow, allow_problems = worker_allowances.read(data.get(worker_allowances.KEY))
    problems.extend(allow_problems)
    if agent_id is not None and trust.operator_id == agent_id:
        problems.append(f"trust.operator_id: the operator cannot be the agent itself ({agent_id})")
    if agent_id is not None and agent_id in trust.allow:
        problems.append(f"trust.allow: the agent itself ({agent_id}) cannot be an allowed person")
    if problems or account_id is None or base_url is None or agent_id is None or token_file is None:
        return tuple(problems)
    return Configuration(
        account_id, base_url, agent_id, token_file, trust, routes, worker_command, concurrency,
        task_deadline, timings, unsafe, worker_env, worker_allow,
    )  # fmt: skip


def to_mapping(configuration: Configuration) -> dict[str, Any]:
    """The JSON form; ``parse_configuration(to_mapping(c)) == c``."""
    trust = configuration.trust
    return {
        "version": VERSION,
        "account_id": configuration.account_id,
        "base_url": configuration.base_url,
        "agent_id": configuration.agent_id,
        "token_file": configuration.token_file,
        "trust": {"mode": trust.mode.value, "operator_id": trust.operator_id, "allow": list(trust.allow)},
        "routes": {
            str(route.project_id): {"directory": route.directory, "class": route.work_class,
                                    "watch_completions": route.watch_completions}
            for route in configuration.routes
        },
        "worker_command": list(configuration.worker_command) if configuration.worker_command else None,
        "concurrency": configuration.concurrency,
        "task_deadline": format_duration(configuration.task_deadline),
        "timings": {key: format_duration(getattr(configuration.timings, key)) for key in TIMING_KEYS},
        "unsafe_test_timings": configuration.unsafe_test_timings,
        "worker_env": list(configuration.worker_env),
        worker_allowances.KEY: worker_allowances.to_mapping(configuration.worker_allow),
    }


def missing(configuration: Configuration) -> tuple[str, ...]:
    """What a valid configuration still lacks for useful work (none of it stops a setup)."""
    lines = []
    if configuration.trust.operator_id is None:
        lines.append("no operator: no one's requests are trusted and nothing is assigned "
                     "(--operator ID names the person the agent works for)")
    if configuration.trust.mode is TrustMode.allowlist and not configuration.trust.allow:
        lines.append("allowlist trust with no one allowed: only the operator is trusted (--allow ID)")
    if not configuration.routes:
        lines.append("no route: mentions in every project will get a holding reply and no work "
                     "(--route PROJECT=DIR)")
    return tuple(lines)


# -- a route's directory, judged -------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RouteFacts:
    project_id: int
    directory: str
    exists: bool
    is_directory: bool
    writable: bool
    real: str = ""  # its resolved real path
    own: tuple[OwnPath, ...] = ()  # the connector's paths, resolved (core.route_reach)


def route_problem(route: RouteFacts) -> str | None:
    where = f"routes.{route.project_id}.directory: {route.directory}"
    if not route.exists:
        return f"{where} does not exist"
    if not route.is_directory:
        return f"{where} is not a directory"
    if (reach := route_reach_problem(route)) is not None:
        return reach
    if not route.writable:
        return f"{where} is not writable by this user"
    return None


def route_reach_problem(route: RouteFacts) -> str | None:
    """The route's directory reaching one of the connector's own paths, said as ``route_problem`` says it."""
    if (reach := reached(route.real, route.own)) is not None:
        where = f"routes.{route.project_id}.directory: {route.directory}"
        return f"{where} {reach}: a worker there could read and change it"
    return None


def route_advice(route: RouteFacts) -> str:
    if route.exists and route.is_directory and reached(route.real, route.own) is not None:
        return (f"give the project a directory apart from the connector's files: bin/connect setup "
                f"--route {route.project_id}=DIRECTORY")
    if route.exists and route.is_directory:
        return "let this user write there (the worker works in it), or change the route"
    return f"create it, or change the route: bin/connect setup --route {route.project_id}=DIRECTORY"


def route_problems(routes: Iterable[RouteFacts]) -> tuple[str, ...]:
    return tuple(problem for problem in map(route_problem, routes) if problem is not None)


# -- what a re-read file authorizes ---------------------------------------------------------
RELOAD_EVERY = timedelta(seconds=2)
_TAKE_A_RESTART = ("base_url", "token_file", "trust", "worker_command", "concurrency", "task_deadline",
                   "timings")


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
        named = f"account {now.account_id} and agent {now.agent_id}"
        problem = f"the configuration file names {named}, not this connector's account {running.account_id}"
        return Authorization(usable=False, problem=f"{problem} and agent {running.agent_id}")
    changed = any(getattr(now, name) != getattr(running, name) for name in _TAKE_A_RESTART)
    pending = "a change besides the routes takes effect at the next start" if changed else ""
    return Authorization(usable=True, routes=now.routes, pending=pending)


def unreaching(authorization: Authorization, routes: Iterable[RouteFacts]) -> Authorization:
    """``authorization``, or nothing authorized while one of its routes reaches the connector's own
    paths (a file edited by hand while the connector runs; setup refuses it)."""
    for route in routes:
        if (reach := route_reach_problem(route)) is not None:
            return Authorization(usable=False, problem=f"the configuration file is refused: {reach}")
    return authorization


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
