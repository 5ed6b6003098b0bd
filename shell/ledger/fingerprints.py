"""The fingerprints of the connector's credentials, which a worker's words are refused for holding.

Only ``core.fingerprints``' digests are written, never a credential. The connector's own (its
tokens, the client secret) have no task: ``record_credentials`` writes a credential's set when it
changed, keeping the one before (a refreshed token may still be honoured). A task's token is
written with its task and leaves with it (a trigger, when the task is superseded). ``known`` is
what the worker's tools compare with: the connector's and every live task's (a superseded task's
are deleted with it)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import datetime

from core.fingerprints import TASK_TOKEN, Fingerprint, fingerprints
from core.timestamps import format_timestamp

_INSERT = ("INSERT INTO credential_fingerprints (sha256, length, folded, credential, task_id, written_at)"
           " VALUES (?, ?, ?, ?, ?, ?)")  # fmt: skip
_KNOWN = "SELECT credential, length, folded, sha256 FROM credential_fingerprints"


def record_task_token(connection: sqlite3.Connection, task_id: int, token: str, now: datetime) -> None:
    _write(connection, fingerprints(TASK_TOKEN, token), task_id, now)


def record_credentials(connection: sqlite3.Connection, named: Iterable[tuple[str, str]], now: datetime) -> int:
    """Each (name, credential) whose fingerprints are not the newest written under its name: its
    older generations deleted but the newest, then its set written. How many sets were written."""
    written = 0
    for credential, secret in named:
        given = fingerprints(credential, secret)
        newest = connection.execute(
            "SELECT MAX(written_at) FROM credential_fingerprints WHERE task_id IS NULL AND credential = ?",
            (credential,),
        ).fetchone()[0]
        sql = ("SELECT sha256 FROM credential_fingerprints WHERE task_id IS NULL AND credential = ?"
               " AND written_at = ?")  # fmt: skip
        if not given or {row[0] for row in connection.execute(sql, (credential, newest))} == _digests(given):
            continue
        connection.execute(
            "DELETE FROM credential_fingerprints WHERE task_id IS NULL AND credential = ? AND written_at < ?",
            (credential, newest),
        )
        _write(connection, given, None, now)
        written += 1
    return written


def known(connection: sqlite3.Connection) -> frozenset[Fingerprint]:
    return frozenset(Fingerprint(str(name), int(length), bool(folded), str(digest))
                     for name, length, folded, digest in connection.execute(_KNOWN))  # fmt: skip


def _digests(given: Iterable[Fingerprint]) -> set[str]:
    return {found.sha256 for found in given}


def _write(connection: sqlite3.Connection, given: Iterable[Fingerprint], task_id: int | None, now: datetime) -> None:
    stamp = format_timestamp(now)
    connection.executemany(_INSERT, [(found.sha256, found.length, int(found.folded), found.credential, task_id,
                                      stamp) for found in given])  # fmt: skip
