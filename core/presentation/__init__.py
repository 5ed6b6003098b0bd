"""Rendering for a person or a machine: values in, text and JSON out.

Rules:
1. Pure, like the rest of core: no I/O, no clock. But nothing here decides anything: a module
   in this package only shows values the shell read and core's rule modules decided.
2. Snapshot value types live here too (``status_values``), not under ``shell.cli``: the ledger
   fills them, and the ledger must never import the command line.
"""
