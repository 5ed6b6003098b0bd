"""Re-reading the configuration file while the connector runs (``connectRoutesTTL``).

Rules:
1. ``read`` reads the file by ``shell.state.config``'s one policy (owner-only, no symlink, JSON
   object) and asks ``core.configuration.authorize`` what it authorizes; a file that cannot be
   read is handed over as the one line saying why (never its content: it holds no token, but
   the error names the file, not what is in it).
2. ``Reloader.apply`` makes the answer take effect: the admission settings and the dispatcher's
   routes are replaced whole (one assignment each, so a loop sees the old routes or the new,
   never a mix); what changed is logged once (``core.configuration.news``) and said in the lock
   file's metadata for ``status``. When the file is usable again, records blocked
   ``config_unreadable`` are handed back to admission at once, not at their next retry.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from core.admission import AdmissionSettings
from core.configuration import Authorization, Configuration, authorize, news
from shell.errors import UserError
from shell.state.config import read_config_mapping

log = logging.getLogger("connector.config")


def read(path: Path, running: Configuration) -> Authorization:
    """What the file at ``path`` authorizes the connector started with ``running`` (rule 1)."""
    try:
        mapping = read_config_mapping(path)
    except UserError as error:
        return authorize(running, str(error).split("\n", 1)[0])
    if mapping is None:
        return authorize(running, f"{path} does not exist")
    return authorize(running, mapping)


def routed_settings(settings: AdmissionSettings, authorization: Authorization) -> AdmissionSettings:
    """``settings`` serving what ``authorization`` authorizes."""
    return replace(
        settings,
        routed_projects=authorization.routed_projects,
        watched_projects=authorization.watched_projects,
        configuration_usable=authorization.usable,
    )


@dataclass
class Reloader:
    """Applies each re-read to the running parts (rule 2)."""

    current: Authorization
    set_routes: Callable[[Authorization], None]
    note: Callable[[str], None]  # the lock file's metadata: "" when usable
    readmit_unreadable: Callable[[], None]

    def apply(self, after: Authorization) -> tuple[str, ...]:
        before, self.current = self.current, after
        said = news(before, after)
        if not said:
            return said
        self.set_routes(after)
        for line in said:
            (log.info if after.usable else log.warning)("configuration: %s", line)
        self.note(after.problem)
        if after.usable and not before.usable:
            self.readmit_unreadable()
        return said
