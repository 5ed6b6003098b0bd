"""``bin/connect doctor``'s measurements: the shell half of each check (``core.doctor`` judges).

Rules (the command's are in ``shell.cli.doctor``):
1. Usable beside a running connector: nothing here takes the instance lock or the pair lock,
   the ledger is opened read-only (``mode=ro``), the token file is read and never refreshed
   or written, and one request goes to Basecamp.
2. Each measurement ends in a ``core.doctor.Check``; what cannot be measured is said in the
   check, never raised: one check's trouble never hides the others.
3. ``local`` measures the machine (state directory, ledger, disk, lock, pair record, routes,
   worker program); ``remote`` the token and Basecamp; ``handshake`` the ``--deep`` spawn.
"""
