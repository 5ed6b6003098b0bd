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
4. Errors meet the one seam of both command lines (``shell.cli.seam``): a ``UserError`` is one
   line on stderr and its exit code, a busy ledger and an unreadable one in this program's own
   words; bad usage is argparse's 2. A person never sees a traceback for bad input.
5. Output is for a person, or with ``--json`` for a machine (stdout only; an error is one
   line on stderr and, with ``--json``, one JSON object on stdout too). ``show`` prints the
   body: the connector's own fixed-form words. No log line carries a body.

One verb a module: ``listing`` (list), ``show``, ``decide`` (sent, abandon, resend); ``shared``
holds what they share (the ledger they were pointed at, how an intent is shown); ``entry`` is
the parser and ``main``. Who decided is ``shell.cli.who``, shared with ``bin/connect``.
"""
