"""The server's end of ``bin/connect doctor --deep``'s probe: ``bin/connect mcp`` started with a
probe token (``core.task_token.PROBE_PREFIX``) by a worker doctor spawned.

Rules:
1. A probe token names no task and grants nothing: the server opens no ledger, answers the MCP
   handshake (``initialize``, ``tools/list``, ``ping``) as it always does, and refuses every
   tool call, telling the worker there is no dispatch and to stop.
2. When the client says ``notifications/initialized`` the handshake is complete: the server
   creates an empty owner-only marker beside the ledger its configuration names, named from the
   token's hash (``core.task_token.probe_marker_name``). Doctor waits for it, then ends the
   worker's process group and removes it. A marker that cannot be written is logged; doctor
   then says the handshake was not seen.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import IO, TYPE_CHECKING

from returns.result import Failure, Result

from core.dispatch_tools import RefusalKind, ToolRefusal, refuse
from core.task_token import probe_marker_name
from shell import private_files
from shell.worker.mcp import McpServer, serve

if TYPE_CHECKING:  # the tools' classes: a tool call's imports (``shell.worker.mcp`` rule 6)
    from core.dispatch_tools.decisions import AckRequest, CompleteRequest, GetRequest, ReplyRequest
    from core.dispatch_tools.instruction import DeliveryReceipt
    from shell.ledger.worker_calls import Dispatched

log = logging.getLogger(__name__)

NO_DISPATCH = (
    "this is bin/connect doctor checking that you start with the connector's MCP server: "
    "there is no dispatch; stop now"
)


class ProbeTools:
    """The dispatch tools, each refused (rule 1)."""

    def get_dispatch(self, request: GetRequest) -> Result[Dispatched, ToolRefusal]:
        return Failure(refuse(RefusalKind.task_token_refused, NO_DISPATCH))

    def ack_dispatch(self, request: AckRequest) -> Result[DeliveryReceipt, ToolRefusal]:
        return Failure(refuse(RefusalKind.task_token_refused, NO_DISPATCH))

    def complete_dispatch(self, request: CompleteRequest) -> Result[DeliveryReceipt, ToolRefusal]:
        return Failure(refuse(RefusalKind.task_token_refused, NO_DISPATCH))

    def reply_dispatch(self, request: ReplyRequest) -> Result[DeliveryReceipt, ToolRefusal]:
        return Failure(refuse(RefusalKind.task_token_refused, NO_DISPATCH))


def marker_path(ledger: str | Path, token: str) -> Path:
    """Where the probe's server marks a completed handshake (rule 2)."""
    return Path(ledger).parent / probe_marker_name(token)


def serve_probe(ledger: str, token: str, reader: IO[bytes], writer: IO[bytes], version: str) -> None:
    """Serve the probe until stdin ends (rules 1-2)."""
    marker = marker_path(ledger, token)

    def mark() -> None:
        try:
            private_files.write_new_file(marker, b"")
        except OSError as error:
            log.warning("doctor's probe: the handshake's marker could not be written: %s", error.strerror)

    log.info("doctor's probe: serving the handshake only")
    serve(reader, writer, McpServer(ProbeTools(), version=version, on_initialized=mark))
