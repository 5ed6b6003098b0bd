"""``bin/connect redispatch EVENT_ID``: a person authorizes a record the connector will not run
on its own. The rules are ``core.decisions``'; the command is ``shell.cli.decisions``."""

from __future__ import annotations

import argparse

from core.decisions import Action
from shell.cli import decisions as decision_cli


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    decision_cli.register(
        subparsers,
        Action.redispatch,
        description=(
            "Authorize a record the connector will not run on its own. Accepted for a completed "
            "record whose outcome is unknown or failed (it is admitted at once, and the running "
            "connector starts a new worker for it), for a blocked one (admission runs again "
            "what blocked it and admits it when that succeeds), and for a held one. Only in a project "
            "the configuration serves. A record a live task carries is authorized at once: the "
            "task's token is retired, its worker stopped (SIGTERM, a grace, SIGKILL, only while it is "
            "provably that worker; worker_state says: stopped, gone, held or not_recorded), and it is "
            "admitted when that task ends. Refused for a success, a discarded record, and one still "
            "waiting to run. Who decided is recorded. Safe while the connector runs. "
            "Exit codes: 0 decided; 3 configuration or ledger; 4 no such event; 5 refused."
        ),
    )
