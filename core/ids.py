"""The ledger's ids, read one way wherever one comes in: the configuration, the command line, the
worker's prompt and tools, a listing, the stand-in.

``MAX_ID`` is the largest id the ledger can store (SQLite's INTEGER); a larger one is a typo. An id
written as text is ASCII decimal digits and nothing else: Python's ``int`` takes ``+7``, `` 7``,
``٣`` and ``７``, and a person who typed one of those did not mean the id it would make.
"""

from __future__ import annotations

MAX_ID = 2**63 - 1


def id_digits(text: str) -> int | None:
    if not (text.isascii() and text.isdigit()):
        return None
    return int(text)
