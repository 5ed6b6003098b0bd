"""Named steps where a crash test can stop the process, to kill it there with SIGKILL.

Rule: with ``CONNECTOR_PAUSE_AT`` unset (always, outside tests) ``pause_at`` does nothing. With
it naming a step, the process prints ``paused at <step>`` on stderr when it reaches that step
and waits there forever, for the test that started it to kill it.
"""

from __future__ import annotations

import os
import sys
import threading

PAUSE_VARIABLE = "CONNECTOR_PAUSE_AT"


def pause_at(step: str) -> None:
    if os.environ.get(PAUSE_VARIABLE) != step:
        return
    print(f"paused at {step}", file=sys.stderr, flush=True)
    threading.Event().wait()
