"""The bounds a worker's words and reports are held to: plain numbers and names, one home.

``core.worker_words`` and ``core.dispatch_tools.decisions`` enforce them; the MCP server's tool
definitions (``shell.worker.mcp``) show them in the schemas ``tools/list`` answers. They
live here, apart from the dataclasses that enforce them, so the server's start reads them without
building those classes: a worker waits on that start.
"""

from __future__ import annotations

BOOST_LIMIT = 16
MAX_ACK_CHARACTERS = 500
MAX_MESSAGE_CHARACTERS = 10_000
MAX_NOTES = 5

WORDS_STATES = ("posted", "waiting", "uncertain", "refused", "not_posted")
"""``core.worker_words`` rule 6: every state a call's answer gives its words."""

MAX_LINKS = 20
MAX_LINK_LENGTH = 2048
