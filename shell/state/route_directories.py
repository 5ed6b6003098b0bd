"""What the file system says of a route's directory, read for ``core.configuration``: setup,
run and doctor read it here and are answered there, so they judge alike and say it alike."""

from __future__ import annotations

import os

from core.configuration import RouteFacts

WRITABLE = os.W_OK | os.X_OK


def route_facts(project_id: int, directory: str) -> RouteFacts:
    """Route ``project_id``'s directory as it stands now."""
    return RouteFacts(
        project_id,
        directory,
        exists=os.path.exists(directory),
        is_directory=os.path.isdir(directory),
        writable=os.access(directory, WRITABLE),
    )
