"""core.worker_stream: the attempt's stop reason, from what the driver saw."""

import pytest

from core.snapshots import StopReason
from core.worker_stream import (
    Ending,
    Exited,
    NeverStarted,
    Signaled,
    StopRequest,
    Vanished,
    WorkerEnd,
    spawn_failed,
    stop_reason,
)

SIGKILL = 9
SIGTERM = 15

EVERY_ENDING: list[Ending] = [
    Exited(0),
    Exited(1),
    Exited(143),
    Signaled(SIGTERM),
    Signaled(SIGKILL),
    Vanished(),
]


def test_exit_zero_is_finished() -> None:
    assert stop_reason(WorkerEnd(Exited(0))) == StopReason.finished


@pytest.mark.parametrize("status", [1, 2, 127, 255])
def test_a_non_zero_exit_is_failed(status: int) -> None:
    assert stop_reason(WorkerEnd(Exited(status))) == StopReason.failed


@pytest.mark.parametrize("number", [SIGTERM, SIGKILL, 6, 11])
def test_a_signal_the_dispatcher_did_not_send_is_failed(number: int) -> None:
    assert stop_reason(WorkerEnd(Signaled(number))) == StopReason.failed


@pytest.mark.parametrize("ending", EVERY_ENDING)
def test_a_stop_at_the_deadline_is_deadline_however_the_worker_went(ending: Ending) -> None:
    assert stop_reason(WorkerEnd(ending, StopRequest.deadline)) == StopReason.deadline


@pytest.mark.parametrize("ending", EVERY_ENDING)
def test_a_stop_at_shutdown_is_shutdown_however_the_worker_went(ending: Ending) -> None:
    assert stop_reason(WorkerEnd(ending, StopRequest.shutdown)) == StopReason.shutdown


def test_a_worker_gone_without_a_status_to_read_is_lost() -> None:
    assert stop_reason(WorkerEnd(Vanished())) == StopReason.lost


def test_a_worker_that_never_started_is_failed_and_spawn_failed() -> None:
    end = WorkerEnd(NeverStarted("FileNotFoundError: No such file or directory"))
    assert stop_reason(end) == StopReason.failed
    assert spawn_failed(end)


@pytest.mark.parametrize("ending", EVERY_ENDING)
def test_only_a_worker_that_never_started_is_spawn_failed(ending: Ending) -> None:
    assert not spawn_failed(WorkerEnd(ending))
    assert not spawn_failed(WorkerEnd(ending, StopRequest.deadline))
