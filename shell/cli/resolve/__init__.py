"""``bin/outbox-resolve``: a person's decisions about lifecycle messages the connector left them.

Rules:
1. ``list`` and ``show`` read through ``open_ledger_read_only``; ``sent``, ``abandon`` and
   ``resend`` write through ``open_existing_ledger`` (``shell.cli.person.deciding_on``). Neither
   creates, migrates or tightens a ledger: a missing, foreign, too new or unprivate file is one
   line and EXIT_CONFIG.
2. Each decision is one short transaction (``shell.ledger.resolution``), safe beside a running
   connector; a lock held past the busy timeout is "the ledger is busy", EXIT_UNAVAILABLE.
3. Who decided is recorded: ``--by``, by default ``local:<user name>`` (``shell.cli.who``).
4. Errors meet the one seam (``shell.cli.seam``), a busy or unreadable ledger in its own words.
5. Output is for a person, or with ``--json`` a machine. ``show`` prints the body (the
   connector's fixed words); no log line carries one."""
