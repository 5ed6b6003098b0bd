"""A pytest plugin for ``bin/prove``: what each test did, written to the file named by
``PROVE_OUTCOMES``, so the runner counts real test failures and nothing else.

Rules:
1. A test that failed or errored (in setup, call or teardown) is ``failed``: the mutation
   broke what the test checks, or what it stands on.
2. A module that could not be collected (an import error, a syntax error) is recorded as a
   collection failure. That says the mutation broke the program's text, not that a test saw
   the rule missing: the runner never counts it as red.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

_outcomes: dict[str, str] = {}
_broken: list[str] = []


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _broken.append(report.nodeid or "<session>")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed:
        _outcomes[report.nodeid] = "failed"
    elif report.when == "call" or report.skipped:
        _outcomes.setdefault(report.nodeid, "skipped" if report.skipped else "passed")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    target = os.environ.get("PROVE_OUTCOMES")
    if target:
        Path(target).write_text(json.dumps({"tests": _outcomes, "uncollectable": _broken}))
