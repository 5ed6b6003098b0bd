"""A port a test holds: bound, never listening.

Rule: ``held_port()`` binds 127.0.0.1 on a port the kernel picks, with SO_REUSEADDR, and never
listens. While it is held a connection to the port is refused, and nothing else takes the port:
not a plain bind, not an ephemeral port the kernel hands out. A server that binds with
SO_REUSEADDR (the stand-in's ``http.server`` does) binds it beside the holder. So a test that
needs "nothing answers here", then a server at that same address, never frees the port between
the two for another process to take (a port closed and bound again later could be taken).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def held_port() -> Iterator[int]:
    """The rule: the port, held until the block ends."""
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", 0))
        yield holder.getsockname()[1]
