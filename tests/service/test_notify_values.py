"""The notify protocol's values (``core.notify``), plain: where ``NOTIFY_SOCKET`` points, the
watchdog's interval from ``WATCHDOG_USEC`` and ``WATCHDOG_PID``, when a ping is due, and a
``STATUS=`` that stays one assignment whatever its text; and a send that fails once the start
passed its check (``shell.notify``), logged once."""

from __future__ import annotations

import logging
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.heartbeats import STALL_AFTER
from core.notify import (
    NotifyAddress,
    notify_address,
    ping_due,
    ping_every,
    stalled,
    status,
    watchdog_interval,
)
from shell.notify import Service

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def test_a_path_and_an_abstract_name_are_addresses_and_anything_else_is_refused_escaped() -> None:
    assert notify_address("/run/systemd/notify") == NotifyAddress("/run/systemd/notify", "/run/systemd/notify")
    assert notify_address("@abc") == NotifyAddress("\0abc", "@abc")
    for value in ("@", "run/notify", "vsock:2:1234", "x\x1by"):
        refused = notify_address(value)
        assert isinstance(refused, str)
        assert "is not a socket" in refused
    assert "\x1b" not in str(notify_address("x\x1by"))
    assert "\\x1b" in str(notify_address("x\x1by"))


def test_the_watchdog_interval_is_watchdog_usec_for_this_process_alone() -> None:
    assert watchdog_interval({"WATCHDOG_USEC": "30000000"}, 7) == timedelta(seconds=30)
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "7"}, 7) == timedelta(seconds=30)
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "8"}, 7) is None
    for usec in ("", "0", "-5", "1e6", "٣", " 5"):
        assert watchdog_interval({"WATCHDOG_USEC": usec}, 7) is None
    assert watchdog_interval({}, 7) is None
    assert ping_every(timedelta(seconds=30)) == 15


def test_a_ping_is_due_only_while_every_loop_has_beaten_within_the_stall_bound() -> None:
    fresh = NOW - timedelta(seconds=1)
    assert ping_due({"intake": fresh, "outbox": fresh}, NOW)
    assert ping_due({"intake": fresh, "outbox": NOW - STALL_AFTER}, NOW)  # at the bound: still turning
    stale = {"intake": fresh, "outbox": NOW - STALL_AFTER - timedelta(seconds=1)}
    assert not ping_due(stale, NOW)
    assert stalled(stale, NOW) == ("outbox",)
    assert not ping_due({}, NOW), "no loop has turned yet"
    assert not ping_due({"intake": NOW - timedelta(seconds=9)}, NOW, timedelta(seconds=8))


@given(st.text())
def test_a_status_is_one_assignment_whatever_its_text(text: str) -> None:
    line = status(text)
    assert line.startswith("STATUS=")
    assert len(line.splitlines()) <= 1
    assert "\n" not in line


def test_a_send_that_fails_once_started_is_logged_once_and_never_raises(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as manager:
        manager.bind(str(path))
        service = Service.of({"NOTIFY_SOCKET": str(path)})
        assert manager.recv(100) == b"STATUS=starting"
    path.unlink()  # the manager went away
    with caplog.at_level(logging.WARNING, logger="connector.run"):
        service.ready("account=1 agent=2")
        service.stopping()
    (warning,) = [record.getMessage() for record in caplog.records]
    assert "could not be sent to" in warning
