"""What a route's directory reaches of the connector's own: a worker reads and edits every file under
its directory, so a route that is, holds or lies inside one of the connector's paths (its state
directory, token file, runtime directory, checkout, venv, a worker's MCP file) hands that path to
whoever writes a request. Judged on real paths the shell resolved, so a symlink hides none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True, slots=True)
class OwnPath:
    what: str  # "the token file", "the state directory", ...
    real: str  # its resolved real path


def reached(route_real: str, own: Iterable[OwnPath]) -> str | None:
    """How the route at ``route_real`` reaches the first of ``own`` it reaches, or None."""
    route = PurePosixPath(route_real)
    for path in own:
        target = PurePosixPath(path.real)
        if route == target:
            return f"is {path.what} {path.real}"
        if route in target.parents:
            return f"holds {path.what} {path.real}"
        if target in route.parents:
            return f"lies inside {path.what} {path.real}"
    return None
