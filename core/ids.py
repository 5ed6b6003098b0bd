"""The ledger's ids: SQLite INTEGER row ids, read one way wherever one comes in.

Rules:
1. ``MAX_ID`` is the largest id the ledger can store (2**63 - 1); a larger one is a typo, refused
   wherever an id is read (the configuration, the command line, the worker's prompt and tools,
   a listing, the stand-in).
2. An id written as text is ASCII decimal digits and nothing else (``id_digits``): no sign, no
   space, no other script's digits -- Python's ``int`` takes ``+7``, `` 7``, ``٣`` and ``７``, and
   a person who typed one of those did not mean the id it would make.
"""

from __future__ import annotations

MAX_ID = 2**63 - 1
"""The largest id the ledger can store (SQLite's INTEGER); a larger one is a typo, refused."""


def id_digits(text: str) -> int | None:
    """``text`` as a whole number when it is ASCII decimal digits alone (rule 2); otherwise None."""
    if not (text.isascii() and text.isdigit()):
        return None
    return int(text)
