"""Named steps where a crash test can stop the process, to kill it there with SIGKILL.

Rule: with ``CONNECTOR_PAUSE_AT`` unset (always, outside tests) ``pause_at`` does nothing. With
it naming a step, the process prints ``paused at <step>`` on stderr when it reaches that step
and waits there forever, for the test that started it to kill it -- or, with
``CONNECTOR_RESUME_WHEN`` naming a file as well, until that file exists, then goes on: a test
acts between that step and the next (another process's transaction), then lets it resume.

The variable is read once, as the module is imported: a crash test sets it in the environment
of the process it starts, never later, and the outbox passes two steps an intent, where a read
of ``os.environ`` each time was a measurable part of its cost (``bin/bench outbox``).
"""

from __future__ import annotations

import os
import sys
import threading
import time

PAUSE_VARIABLE = "CONNECTOR_PAUSE_AT"
RESUME_VARIABLE = "CONNECTOR_RESUME_WHEN"
RESUME_POLL_SECONDS = 0.02

_PAUSING_AT = os.environ.get(PAUSE_VARIABLE)


def pause_at(step: str) -> None:
    if step != _PAUSING_AT:
        return
    print(f"paused at {step}", file=sys.stderr, flush=True)
    resume = os.environ.get(RESUME_VARIABLE)
    if resume is None:
        threading.Event().wait()
        return
    while not os.path.exists(resume):
        time.sleep(RESUME_POLL_SECONDS)
