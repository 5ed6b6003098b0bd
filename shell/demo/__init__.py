"""``bin/connect demo``: the stand-in, a demo configuration, the connector as a child process,
the bundled demo worker, five narrated scenes and a verdict from the stand-in's own record.

stage (world and directory) -> connector_child (``bin/connect run``) -> scenes (played and
narrated from the ledger, read-only: ledger_view) -> ending (what each place holds; the
verdict of ``shell.demo.verdict``). ``worker`` is the demo worker the connector starts;
``standin_link`` is every word the demo says to the stand-in. ``runner`` ties them together.
``script`` (the scenes as data), ``narration`` and ``verdict`` are pure functions of values:
they live here, beside the demo they serve, not among core's rules.
"""
