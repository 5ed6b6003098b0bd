"""``bin/connect doctor``'s measurements: the shell half of each check (``core.doctor`` judges).

Usable beside a running connector: no lock is taken, the ledger is opened read-only, the token
file is never refreshed or written, and Basecamp is asked only reads that move nothing. What
cannot be measured is said in its check, never raised, so no check's trouble hides another's."""
