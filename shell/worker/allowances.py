"""The default worker's allowances as the shell reads them: each MCP config file read within
bounds from an owner-only regular file, and what setup, status and doctor say the worker is given,
``--allowed-tools`` built by the one builder the spawn uses (``core.worker_allowances.allowed_tools``)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from core.configuration import Configuration
from core.json_input import JsonRefused, decode_json
from core.worker_allowances import MCP_FILE_MAX_BYTES, allowed_tools, gives, servers_of
from shell import private_files
from shell.errors import UserError


def allowances_told(configuration: Configuration) -> tuple[str, ...]:
    """What setup allowed the default worker, by name, then the exact ``--allowed-tools`` it gets and
    what a pattern gives beyond its words (``core.worker_allowances.gives``); () when nothing was."""
    named = configuration.worker_allow.named()
    if not named:
        return ()
    if configuration.worker_command:  # refused beside allowances, by WorkerCommand.configured
        return named
    try:
        files = configuration.worker_allow.mcp_files
        servers = [server for path in files for server in mcp_servers_of(Path(path))]
        tools = allowed_tools(configuration.worker_allow.bash, servers)
    except ValueError as error:
        return (*named, str(error))
    notes = tuple(line for line in map(gives, configuration.worker_allow.bash) if line is not None)
    return (*named, f"--allowed-tools {tools}", *notes)


def mcp_servers_of(path: Path) -> tuple[str, ...]:
    """The server names an MCP config file gives, or ``ValueError`` saying why not: the file an
    owner-only regular one (a FIFO or a device refused without a read), read and decoded within bounds."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ValueError(f"the MCP config file {path} is a symlink; name the file itself") from None
        raise ValueError(f"the MCP config file {path} cannot be read: {error.strerror or error}") from None
    try:
        private_files.check_file_status(os.fstat(descriptor), path, "the MCP config file",
                                        "it names the programs the worker starts")
        raw = _read_at_most(descriptor, MCP_FILE_MAX_BYTES + 1)
    except UserError as error:
        raise ValueError(str(error)) from None
    except OSError as error:
        raise ValueError(f"the MCP config file {path} cannot be read: {error.strerror or error}") from None
    finally:
        os.close(descriptor)
    decoded = decode_json(raw, max_bytes=MCP_FILE_MAX_BYTES)
    if isinstance(decoded, JsonRefused):
        raise ValueError(f"the MCP config file {path} is not usable JSON: {decoded.reason}")
    servers = servers_of(decoded.value)
    if isinstance(servers, str):
        raise ValueError(f"the MCP config file {path}: {servers}")
    return servers


def _read_at_most(descriptor: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    while (size := sum(map(len, chunks))) < limit and (chunk := os.read(descriptor, limit - size)):
        chunks.append(chunk)
    return b"".join(chunks)
