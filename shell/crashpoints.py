"""Named steps where a crash test can stop the process, to kill it there with SIGKILL. With
``CONNECTOR_PAUSE_AT`` unset (always, outside tests) ``pause_at`` does nothing; naming a step, the
process prints ``paused at <step>`` on stderr there and waits forever for the test to kill it, or,
with ``CONNECTOR_RESUME_WHEN`` naming a file, until that file exists, so a test acts between that
step and the next. The variable is read once, at import, from the environment the process started
with."""

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
