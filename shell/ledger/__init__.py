"""The ledger: the only place SQL runs."""
