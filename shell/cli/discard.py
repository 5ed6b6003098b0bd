"""``bin/connect discard EVENT_ID``: a person closes a record without running it.
The rules are ``core.decisions``'; the command is ``shell.cli.decisions``."""

from __future__ import annotations

import argparse

from core.decisions import Action
from shell.cli import decisions as decision_cli


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    decision_cli.register(
        subparsers,
        Action.discard,
        description=(
            "Close a record without running it, as discarded(by_operator), and record who decided. "
            "Accepted for a record waiting to run, a blocked or held one, and a completed one whose "
            "outcome is unknown. A lifecycle message still pending for it is not sent. Refused for "
            "anything live and for a settled success or failure. Safe while the connector runs. "
            "Exit codes: 0 decided (or already discarded by a person); 3 configuration or ledger; "
            "4 no such event; 5 refused."
        ),
    )
