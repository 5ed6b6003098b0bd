"""``StandIn``: a local Basecamp on 127.0.0.1, for the demo and the tests.

    with StandIn(world="empty", page_sizes=(2, 2, 2, 2)) as standin:
        standin.account_url        # http://127.0.0.1:PORT/ACCOUNT
        standin.world.token        # the agent's bearer token
        standin.add_fault(Fault(FaultAction.create_then_drop, method="POST"))

Rules:
1. It is faithful, not kind: it checks what Basecamp checks and answers what Basecamp
   answers (``shell.standin.api``), so a client bug shows here before it shows in Basecamp.
2. The port is bound when the ``StandIn`` is made (``base_url`` is known at once); serving
   starts with ``start()`` or ``with``; ``stop()`` (or leaving the ``with``) closes every
   connection and waits for the handlers.
3. Its clock (``clock``: a callable answering an aware UTC datetime; default real time)
   stamps what is created, what is listed (``lag``) and every recorded request. Waits of
   faults are real seconds.
4. Faults, the request record and seeding are Python methods here, and the same over HTTP
   under ``/__standin/`` (``shell.standin.control``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from shell.standin.api import BasecampApi
from shell.standin.control import Control
from shell.standin.faults import Fault, FaultBook
from shell.standin.handler import HttpServer
from shell.standin.pagination import BASECAMP_PAGE_SIZES
from shell.standin.recorder import RecordedRequest, RequestLog
from shell.standin.store import Kind, Store
from shell.standin.urls import Urls
from shell.standin.world import World, build_world


def _utc_now() -> datetime:
    return datetime.now(UTC)


class StandIn:
    """A running (once started) Basecamp stand-in. See the module's docstring."""

    def __init__(
        self,
        world: str = "demo",
        *,
        port: int = 0,
        page_sizes: Sequence[int] = BASECAMP_PAGE_SIZES,
        clock: Callable[[], datetime] | None = None,
        enforce_boost_length: bool = True,
        keepalive_timeout: float = 5.0,
    ) -> None:
        if not page_sizes or any(size < 1 for size in page_sizes):
            raise ValueError(f"page sizes must be positive, not {tuple(page_sizes)}")
        self.world: World = build_world(world)
        now = clock or _utc_now
        self._faults = FaultBook()
        self._log = RequestLog()
        self._http = HttpServer(
            port, faults=self._faults, log=self._log, now=now, keepalive_timeout=keepalive_timeout
        )
        self.base_url = self._http.origin
        self.account_url = f"{self.base_url}/{self.world.account_id}"
        self._api = BasecampApi(
            self.world,
            Store(self.world),
            Urls(self.base_url, self.world.account_id),
            now,
            page_sizes,
            enforce_boost_length=enforce_boost_length,
        )
        self._http.api = self._api
        self._http.control = Control(self._api, self._faults, self._log)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    def start(self) -> StandIn:
        if self._thread is None:
            self._thread = threading.Thread(target=self._http.serve, name=f"standin:{self.port}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close every connection, wait for the handlers; the port is freed."""
        self._http.stop()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._http.server_close()

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def add_fault(self, fault: Fault) -> None:
        """Script a fault; faults are taken in the order added, the first match wins."""
        self._faults.add(fault)

    def clear_faults(self) -> None:
        self._faults.clear()

    def requests(self) -> list[RecordedRequest]:
        """Every Basecamp request that reached the stand-in, in arrival order."""
        return self._log.requests()

    def post_count(self, path_contains: str | None = None) -> int:
        """POSTs that reached the stand-in (whatever their fate), whose path contains
        ``path_contains`` when it is given."""
        return self._log.count("POST", path_contains)

    def messages(self, kind: str, recording_id: int) -> list[dict[str, Any]]:
        """Every message of ``kind`` (comment, boost, chat_line) kept on a recording (the
        Campfire for lines), oldest first, visible in listings yet or not, as read alone."""
        return self._api.shown(Kind(kind), recording_id)

    def seed_message(
        self,
        kind: str,
        recording_id: int,
        creator_id: int,
        content: str,
        created_at: datetime | None = None,
    ) -> int:
        """Place a message directly (someone else's, or an old one); its id."""
        return self._api.seed(Kind(kind), recording_id, creator_id, content, created_at).id
