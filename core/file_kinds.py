"""What kind of file a path holds, from its first bytes and its name: so no writer replaces a
file it does not own, and no advice is given for a file the connector did not make.

An SQLite header is a ``ledger``; a JSON object with ``account_id`` and ``agent_id`` a
``configuration``; the JSON ``bin/connect login`` writes, or one word of printable ASCII, a
``token``. A name reserves a kind too, whatever the directory: ``ledger.sqlite3`` and its
sidecars the ledger's, ``config.json`` the configuration's. A writer replaces only a missing or
empty file, or one of its own kind whose name is not another kind's.
"""

from __future__ import annotations

from enum import StrEnum

from core.json_input import json_or_none

HEAD_BYTES = 4096
SQLITE_HEADER = b"SQLite format 3\x00"
LEDGER_NAME = "ledger.sqlite3"
CONFIG_NAME = "config.json"
_LEDGER_SIDECARS = ("-wal", "-shm", "-journal")


class FileKind(StrEnum):
    ledger = "a ledger (an SQLite database)"
    configuration = "a connector configuration"
    token = "a token file"  # noqa: S105 -- a kind's name
    empty = "an empty file"
    other = "a file of another kind"


def kind_of(head: bytes) -> FileKind:
    """``head``: the file's first bytes (``HEAD_BYTES`` are enough)."""
    if head.startswith(SQLITE_HEADER):
        return FileKind.ledger
    if not head.strip():
        return FileKind.empty
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError:
        return FileKind.other
    if text.lstrip().startswith("{"):
        return _json_kind(text)
    return FileKind.token if _reads_as_token(text) and text.strip().isprintable() else FileKind.other


def _json_kind(text: str) -> FileKind:
    data = json_or_none(text)
    if data is None:
        return FileKind.other  # cut short at HEAD_BYTES, not JSON, or too deep: not one of ours either way
    if isinstance(data, dict) and "account_id" in data and "agent_id" in data:
        return FileKind.configuration
    return FileKind.token if _reads_as_token(text) else FileKind.other


def _reads_as_token(text: str) -> bool:
    """Whether ``text`` reads as a token file (``core.oauth``), imported only for a file that is
    not a ledger: every process that opens a ledger imports this module, the MCP server among them."""
    from core.oauth import read_token_text  # noqa: PLC0415 -- see the docstring

    try:
        read_token_text(text)
    except ValueError:
        return False
    return True


def kind_of_name(name: str) -> FileKind | None:
    if name == LEDGER_NAME or any(name == LEDGER_NAME + suffix for suffix in _LEDGER_SIDECARS):
        return FileKind.ledger
    if name == CONFIG_NAME:
        return FileKind.configuration
    return None


def replace_refusal(own: FileKind, name: str, head: bytes | None) -> str | None:
    """Why a writer of ``own`` may not replace ``name`` (its ``head``; None: missing), naming no content."""
    by_name = kind_of_name(name)
    if by_name is not None and by_name is not own:
        return f"its name ({name}) is reserved for {by_name.value}"
    if head is None:
        return None
    found = kind_of(head)
    if found in (own, FileKind.empty):
        return None
    return f"it holds {found.value}, not {own.value}"
