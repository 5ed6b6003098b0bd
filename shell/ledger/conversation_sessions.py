"""Which Claude Code session a conversation's next task resumes (a read; the rule is
``core.worker_stream.resumable``).

Rules:
1. A conversation's latest attempt is the newest launched of any task on it; what it left is
   read as the rule needs it: its stop reason, its non-start, its session, and whether a row of its
   task was settled ``unknown``. Nothing else is consulted.
"""

from __future__ import annotations

import sqlite3

from core.worker_stream import LatestAttempt, resumable


def resume_session(connection: sqlite3.Connection, conversation: str) -> str:
    """The session the conversation's next task resumes, or "" (rule 1)."""
    found = connection.execute(
        "SELECT a.stop_reason, a.not_started, a.session_id,"
        " EXISTS (SELECT 1 FROM task_events te WHERE te.task_id = t.id AND te.outcome = 'unknown')"
        " FROM attempts a JOIN tasks t ON t.id = a.task_id WHERE t.conversation_key = ?"
        " ORDER BY a.launched_at DESC, a.rowid DESC LIMIT 1",
        (conversation,),
    ).fetchone()
    if found is None:
        return ""
    stop_reason, not_started, session_id, left_unknown = found
    return resumable(LatestAttempt(str(stop_reason), str(not_started), str(session_id), bool(left_unknown)))
