"""``bin/connect doctor``'s measurements: the shell half of each check (``core.doctor`` judges).

Usable beside a running connector: nothing here takes the instance lock or the pair lock, the
ledger is opened read-only, the token file is read and never refreshed or written, and Basecamp
is asked only reads that move nothing. Each measurement ends in a ``core.doctor.Check``: what
cannot be measured is said in the check, never raised, so one check's trouble never hides the
others."""
