"""The route-directory preflight, judged once and worded once: ``setup`` refuses a route that
fails it, ``run`` refuses to start with one (its requests would end in a public "could not be
started" notice), and ``doctor`` fails its check, in these same words. A route's directory must
exist, be a directory, and be writable (and searchable) by this user, in that order; the first
it is not is its one problem.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RouteFacts:
    project_id: int
    directory: str
    exists: bool
    is_directory: bool
    writable: bool


def route_problem(route: RouteFacts) -> str | None:
    where = f"routes.{route.project_id}.directory: {route.directory}"
    if not route.exists:
        return f"{where} does not exist"
    if not route.is_directory:
        return f"{where} is not a directory"
    if not route.writable:
        return f"{where} is not writable by this user"
    return None


def route_advice(route: RouteFacts) -> str:
    if route.exists and route.is_directory:
        return "let this user write there (the worker works in it), or change the route"
    return f"create it, or change the route: bin/connect setup --route {route.project_id}=DIRECTORY"


def route_problems(routes: Iterable[RouteFacts]) -> tuple[str, ...]:
    return tuple(problem for problem in map(route_problem, routes) if problem is not None)
