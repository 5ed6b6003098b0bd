"""Named steps where a crash test can stop the process, to kill it there with SIGKILL.

Rule: with ``CONNECTOR_PAUSE_AT`` unset (always, outside tests) ``pause_at`` does nothing. With
it naming a step, the process prints ``paused at <step>`` on stderr when it reaches that step
and waits there forever, for the test that started it to kill it -- or, with
``CONNECTOR_RESUME_WHEN`` naming a file as well, until that file exists, then goes on: a test
acts between that step and the next (another process's transaction), then lets it resume.
"""

from __future__ import annotations

import os
import sys
import threading
import time

PAUSE_VARIABLE = "CONNECTOR_PAUSE_AT"
RESUME_VARIABLE = "CONNECTOR_RESUME_WHEN"
RESUME_POLL_SECONDS = 0.02


def pause_at(step: str) -> None:
    if os.environ.get(PAUSE_VARIABLE) != step:
        return
    print(f"paused at {step}", file=sys.stderr, flush=True)
    resume = os.environ.get(RESUME_VARIABLE)
    if resume is None:
        threading.Event().wait()
        return
    while not os.path.exists(resume):
        time.sleep(RESUME_POLL_SECONDS)
