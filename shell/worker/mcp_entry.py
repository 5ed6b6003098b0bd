"""The MCP server's own entry point, as a worker's MCP configuration launches it:
``PYTHON -P -m shell.worker.mcp_entry --ledger LEDGER [--agent-id N]``.

It is ``bin/connect mcp`` (same options, exits and stderr lines) without the shell script and
the dependency check, the connector's environment being checked already, and with the
collector off while the server's modules import, then frozen out of every collection's way.
A token in the environment is erased from the initial environment block and handed over on a
pipe before the server is imported; where that cannot be done and seen, it goes back in
``os.environ`` for the server to refuse. Only the options the connector writes are moved;
anything else reaches the server unchanged."""

from __future__ import annotations

import gc
import os
import sys

from core.task_token import MAX_TOKEN_BYTES, TASK_TOKEN_ENV
from shell import process_secrets

COMMAND = "mcp"
_VALUED = ("--ledger", "--agent-id", "--token-env")


def run(argv: list[str]) -> int:
    gc.disable()
    from shell.cli import mcp  # noqa: PLC0415, F401 -- after token_on_a_pipe; main finds it imported
    from shell.cli.main import main  # noqa: PLC0415

    gc.freeze()
    gc.enable()
    return main([COMMAND, *argv], commands=(COMMAND,))  # no summary parsers for the other commands


def token_on_a_pipe(argv: list[str]) -> list[str]:
    """``argv`` for the server with the environment's token moved to a pipe; ``argv`` itself when
    there is nothing it may move or the block cannot be erased (the server's checks then decide)."""
    found = _connector_shape(argv)
    if found is None:
        return argv
    kept, name = found
    value = os.environ.get(name)
    if value is None or not value.strip():
        return argv
    taken = {key: os.environ.pop(key) for key in (name, TASK_TOKEN_ENV) if key in os.environ}  # a stray too
    token = value.encode("utf-8", "surrogateescape")
    if not process_secrets.erase_environment((name, TASK_TOKEN_ENV), token):
        os.environ.update(taken)  # put back: the server finds it there and refuses to start
        return argv
    return [*kept, "--token-fd", str(_pipe_holding(token))]


def _pipe_holding(token: bytes) -> int:
    """The read end of a pipe holding ``token``, its write end closed: at most one byte past a
    token's bound, so the write never waits for a reader (this process is the reader) and the
    server still sees an oversized one for what it is."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, token[: MAX_TOKEN_BYTES + 1])  # far below a pipe's buffer
    finally:
        os.close(write_end)
    return read_end


def _connector_shape(argv: list[str]) -> tuple[list[str], str] | None:
    """``argv`` without its ``--token-env`` and the variable it names, or None when ``argv`` is
    not only the options the connector writes."""
    kept: list[str] = []
    name = TASK_TOKEN_ENV
    rest = iter(argv)
    for argument in rest:
        option, equals, inline = argument.partition("=")
        if option not in _VALUED:
            return None
        value = inline if equals else next(rest, None)
        if value is None or value.startswith("-"):
            return None
        if option == "--token-env":
            name = value
        else:
            kept += [option, value]
    return kept, name


if __name__ == "__main__":
    process_secrets.forbid_core_dumps()  # before the token is read
    sys.exit(run(token_on_a_pipe(sys.argv[1:])))
