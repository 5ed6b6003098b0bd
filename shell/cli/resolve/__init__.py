"""``bin/outbox-resolve``: a person's decisions about lifecycle messages the connector left them.

Rules:
1. ``list`` and ``show`` read through ``open_ledger_read_only``; ``sent``, ``abandon`` and
   ``resend`` write through ``open_existing_ledger`` (by ``shell.cli.person.deciding_on``: a
   full disk or a read-only directory says the decision was not recorded). Neither creates,
   migrates or tightens a ledger: a missing, foreign, too new or unprivate file is one line and
   EXIT_CONFIG.
2. Each decision is one short immediate transaction (``shell.ledger.resolution``), safe beside
   a running connector; a lock held past the busy timeout is "the ledger is busy",
   EXIT_UNAVAILABLE, and nothing was changed.
3. Who decided is recorded on the intent: ``--by``, by default ``local:<user name>``, as given, one
   line: one holding a control character, or empty, is refused (``shell.cli.who``).
4. Errors meet the one seam of both command lines (``shell.cli.seam``), a busy ledger and an
   unreadable one in this program's own words.
5. Output is for a person, or with ``--json`` for a machine. ``show`` prints the body: the
   connector's own fixed-form words. No log line carries a body.
"""
