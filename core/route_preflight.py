"""The route-directory preflight: whether a route's directory can take a worker, judged once and
worded once. ``bin/connect setup`` refuses a route it fails, ``run`` refuses to start with one
(its requests would end in a public "could not be started" notice), and ``doctor`` fails its
check, each with these same words (``shell.state.config.route_facts`` reads the facts).

Rule: a route's directory must exist, be a directory, and be writable (and searchable) by this
user, in that order; the first it is not is its one problem, named
``routes.<project>.directory: <directory> ...``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RouteFacts:
    """What the file system says of one route's directory."""

    project_id: int
    directory: str
    exists: bool
    is_directory: bool
    writable: bool


def route_problem(route: RouteFacts) -> str | None:
    """The route's one problem in the preflight's words (the rule above); None when it has none."""
    where = f"routes.{route.project_id}.directory: {route.directory}"
    if not route.exists:
        return f"{where} does not exist"
    if not route.is_directory:
        return f"{where} is not a directory"
    if not route.writable:
        return f"{where} is not writable by this user"
    return None


def route_advice(route: RouteFacts) -> str:
    """What a person does about the route's problem."""
    if route.exists and route.is_directory:
        return "let this user write there (the worker works in it), or change the route"
    return f"create it, or change the route: bin/connect setup --route {route.project_id}=DIRECTORY"


def route_problems(routes: Iterable[RouteFacts]) -> tuple[str, ...]:
    """Each route's problem, in the routes' order."""
    return tuple(problem for problem in map(route_problem, routes) if problem is not None)
