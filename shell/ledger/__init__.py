"""The ledger: the only place SQL runs (``tests/ledger/test_sql_home.py``). Everything else asks
its modules, inside a transaction it opened with ``Ledger.read()`` or ``Ledger.write()``.

Each table is written from one module, ``TABLE_WRITERS`` (``tests/ledger/test_table_writers.py``);
another module that moves a row asks that one. One exception, by statement: a worker's own moves
are ``worker_moves``' statements, and only those: the MCP server runs them, and importing the
tables' owners would import the dispatcher, admission and the outbox into every worker's start."""

TABLE_WRITERS: dict[str, str] = {
    "events": "records",  # seen rows from every lane, verdicts, every later move of a record
    "checkpoints": "records",  # intake's position per filter lineage
    "lane_news": "records",  # when each lane last recorded what no other had
    "inbox_lane": "intake",
    "tasks": "tasks",
    "attempts": "tasks",
    "task_events": "deliveries",  # joins, exposure, pulls, guards, reports, settlement
    "outbox": "outbox",  # intents written, claimed, settled, resolved by a person
    "decisions": "decisions",
    "hold_marker": "hold",  # a person's hold and release
    "generations": "hold",
    "revoked_redispatches": "hold",  # the redispatches a hold revoked
    "live_lane": "intake",
    "losses": "intake",  # what the live lane missed, and its repair
    "gaps": "intake",  # what the feed itself skipped: a 410
    "credential_fingerprints": "fingerprints",  # digests of the credentials a worker's words may not hold
    "schema_migrations": "connection",  # the migrations, applied as the ledger opens
    "sqlite_master": "rules",  # a vocabulary's CHECK removed once: core's rules are triggers
}
