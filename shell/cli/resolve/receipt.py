"""``bin/outbox-resolve sent ID --receipt N``'s check: message N is read before it is recorded.

Rules:
1. Unless ``--unchecked``, ``sent`` reads the intent, then message N alone at its destination
   (``shell.basecamp.reads``), with the configuration beside the ledger (``shared`` rule 4);
   ``core.receipt_check`` decides, given the worker's own message ids the ledger holds for N.
2. An intent the decision is refused for anyway (no such intent, or not one a person may mark
   sent) is not asked about: the decision's own refusal says why, and Basecamp is not read.
3. A message that cannot be the receipt is ``ReceiptNotTheIntents``, EXIT_REFUSED, one line
   naming what differed; nothing is written.
4. Basecamp not answering (or refusing the token, or unreadable) is ``ReceiptUnreadable``,
   EXIT_UNAVAILABLE: nothing is written, and the line says ``--unchecked`` records it unread.
5. No configuration beside the ledger is the configuration's own refusal (EXIT_CONFIG), with a
   line naming ``--state-dir`` and ``--unchecked``.
"""

from __future__ import annotations

from pathlib import Path

from returns.result import Failure

from core.admission import ReadFailure, ReadFailureKind
from core.adoption import check_receipt, worker_message_ids
from core.configuration import Configuration
from core.posting import listing_since
from core.resolution import open_decisions
from shell.basecamp.client import DEFAULT_READ_TIMEOUT, BasecampClient
from shell.basecamp.reads import SummaryReads
from shell.basecamp.tokens import tokens_from
from shell.cli.resolve.shared import Context
from shell.errors import EXIT_CONFIG, EXIT_REFUSED, EXIT_UNAVAILABLE, UserError
from shell.ledger import outbox as rows
from shell.ledger import snapshots
from shell.state.config import load_config, read_token_file

USER_AGENT = "basecamp-connector outbox-resolve (https://github.com/basecamp/basecamp-connector)"


class ReceiptNotTheIntents(UserError):
    """Message N is not the intent's message (rule 3)."""

    exit_code = EXIT_REFUSED


class ReceiptUnreadable(UserError):
    """Basecamp could not be asked about message N (rule 4)."""

    exit_code = EXIT_UNAVAILABLE


def check_receipt_at_basecamp(context: Context, intent_id: int, receipt_id: int) -> bool:
    """Rules 1-5: True when message ``receipt_id`` was read and is intent ``intent_id``'s; False
    when the intent is not one to check (rule 2); else the rule's error."""
    with context.read_only() as ledger, ledger.read() as connection:
        row = rows.intent(connection, intent_id)
        workers = snapshots.worker_task_events(connection, [receipt_id])
    if row is None or "sent" not in open_decisions(row.state, row.note):
        return False
    configuration = _configuration(context.config_path)
    token_file = Path(configuration.token_file)
    client = BasecampClient(
        configuration.base_url,
        configuration.account_id,
        tokens_from(token_file, read_token_file(token_file), context.clock),
        USER_AGENT,
        clock=context.clock,
    )
    reads = SummaryReads(client, configuration.agent_id, context.clock)
    read = reads.message(row.destination, receipt_id, client.deadline_in(DEFAULT_READ_TIMEOUT))
    if isinstance(read, ReadFailure) and read.kind is not ReadFailureKind.not_found:
        raise ReceiptUnreadable(
            f"intent {intent_id}: could not read message {receipt_id} at {row.destination.describe()} "
            f"from {configuration.base_url} ({read.kind}); nothing was changed. Try again, or "
            "--unchecked to record it without looking"
        )
    verdict = check_receipt(
        receipt_id=receipt_id,
        body=row.body,
        destination=row.destination,
        agent_id=configuration.agent_id,
        since=listing_since(row.sending_at, row.created_at),
        found=None if isinstance(read, ReadFailure) else read,
        worker_messages=worker_message_ids(row.destination.kind, workers),
    )
    if isinstance(verdict, Failure):
        raise ReceiptNotTheIntents(f"intent {intent_id}: {verdict.failure()}; nothing was changed")
    return True


def _configuration(path: Path) -> Configuration:
    try:
        return load_config(path)
    except UserError as error:
        raise UserError(
            f"{error}; checking a receipt reads Basecamp as the connector does, through the "
            "configuration beside the ledger (give --state-dir DIR), or --unchecked to record it "
            "without looking",
            EXIT_CONFIG,
        ) from error
