"""``bin/connect mcp``: serve a worker its dispatch tools over MCP stdio, bound to one task.

The task token (never in argv; ``--help`` says how it comes) is read once, first. A token has one
way in: with ``--token-fd``, one also left in the variable is removed and the server refuses to
start; a descriptor that is standard I/O, a regular file or anything but a pipe or socket is
refused and left alone. A token from the environment is erased in place from the block
``/proc/PID/environ`` shows (``shell.process_secrets``) before the ledger is opened; where that
cannot be done and seen done, the server refuses to start (exit 3). A probe token (``doctor
--deep``'s) opens no ledger: the server answers the handshake, marks it done and refuses every
tool. Otherwise a missing, foreign or out-of-date ledger, or a token naming no live task, is one
line on stderr and a non-zero exit before any protocol message. Without ``--agent-id`` the
agent's own mentions stay in instructions, and a warning says so. stdout carries protocol
messages only; logs go to stderr; the end of stdin ends the server, 0."""

from __future__ import annotations

import argparse
import logging
import os
import stat
import sys

from returns.result import Failure

from core.task_token import MAX_TOKEN_BYTES, TASK_TOKEN_ENV, is_probe
from shell import process_secrets
from shell.cli.arguments import descriptor, positive_integer
from shell.cli.main import VERSION, Subparsers, add_command
from shell.errors import EXIT_CONFIG, EXIT_OK, EXIT_REFUSED, UserError
from shell.ledger.connection import open_existing_ledger
from shell.ledger.worker_calls import DispatchLedger
from shell.worker.mcp import McpServer, serve

TOKEN_ENV = TASK_TOKEN_ENV
NOT_ERASED = ("the task token cannot be erased from this process's initial environment, where "
              "/proc/PID/environ would show it for the server's life: refusing to start. Run it where a "
              "process may write its own /proc/self/mem (Linux 3.5 or later, /proc mounted read-write), "
              "or hand the token over on a pipe (--token-fd)")

log = logging.getLogger(__name__)

DESCRIPTION = f"""\
Serve a worker its dispatch from the connector over MCP (JSON-RPC on stdin and stdout):
get_dispatch, ack_dispatch, complete_dispatch and reply_dispatch, bound to the one task its
token names; the worker's words it is handed are posted by the running connector, once.
There is no listing. The connector writes this command into the worker's MCP configuration.

The task token is never an argument: it is read from the environment variable --token-env
names (default {TOKEN_ENV}), which is then removed, or from an inherited pipe or socket
(--token-fd), read to its end and closed. The ledger must already exist."""


def register(subparsers: Subparsers) -> None:
    parser = add_command(subparsers, "mcp", DESCRIPTION)
    parser.add_argument("--ledger", required=True, help="the connector's ledger file (never created)")
    parser.add_argument("--agent-id", type=positive_integer,
                        help="the agent's Basecamp Person id, whose own mentions are stripped from "
                        "instructions (without it, an instruction's content keeps them)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--token-env", metavar="NAME", default=TOKEN_ENV,
                        help=f"the environment variable holding the task token (default {TOKEN_ENV}); "
                        "removed once read")
    source.add_argument("--token-fd", metavar="N", type=descriptor, help="an inherited pipe or socket "
                        "carrying the task token; read to its end and closed")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    process_secrets.forbid_core_dumps()  # a core would hold the task token
    token = take_token(args.token_env, args.token_fd)  # first, before anything else runs
    names = (args.token_env or TOKEN_ENV, TOKEN_ENV)  # /proc/PID/environ would show it
    if args.token_fd is None and not process_secrets.erase_environment(names, token.encode("utf-8")):
        raise UserError(NOT_ERASED, EXIT_CONFIG)
    if is_probe(token):  # doctor --deep's: the handshake and nothing else
        from shell.doctor.handshake import serve_probe  # noqa: PLC0415 -- only a probe token's start reads it

        serve_probe(args.ledger, token, sys.stdin.buffer, sys.stdout.buffer, VERSION)
        return EXIT_OK
    with open_existing_ledger(args.ledger) as ledger:
        dispatch = DispatchLedger(ledger, token, args.agent_id, process_group=os.getpgrp())
        del token
        if isinstance(checked := dispatch.check_token(), Failure):
            raise UserError(checked.failure().message, EXIT_REFUSED)
        if args.agent_id is None:
            log.warning("no --agent-id: instructions keep the agent's own mentions")
        serve(sys.stdin.buffer, sys.stdout.buffer, McpServer(dispatch, version=VERSION))
    return EXIT_OK


def take_token(env_name: str | None, descriptor: int | None) -> str:
    if descriptor is not None:
        if os.environ.pop(TOKEN_ENV, None) is not None:
            raise UserError(f"a task token was also left in ${TOKEN_ENV}; it was removed. "
                            "A token has one way in: refusing to start", EXIT_CONFIG)
        raw = _read_descriptor(descriptor)
    else:
        name = env_name or TOKEN_ENV
        value = os.environ.pop(name, None)
        os.environ.pop(TOKEN_ENV, None)  # a stray default-named token goes too
        if value is None:
            raise UserError(f"no task token: ${name} is not set", EXIT_CONFIG)
        raw = value.encode("utf-8", "surrogateescape")
    try:
        token = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise UserError("the task token is not text", EXIT_CONFIG) from None
    if not token:
        raise UserError("the task token is empty", EXIT_CONFIG)
    return token


def _read_descriptor(descriptor: int) -> bytes:
    if descriptor in (0, 1, 2):
        raise UserError(f"--token-fd {descriptor} is standard I/O, not a pipe or socket", EXIT_CONFIG)
    try:
        status = os.fstat(descriptor)
    except OSError:
        raise UserError(f"--token-fd {descriptor} is not an open descriptor", EXIT_CONFIG) from None
    if not (stat.S_ISFIFO(status.st_mode) or stat.S_ISSOCK(status.st_mode)):
        raise UserError(f"--token-fd {descriptor} is not a pipe or a socket; left alone", EXIT_CONFIG)
    chunks: list[bytes] = []
    try:
        while chunk := os.read(descriptor, MAX_TOKEN_BYTES):
            chunks.append(chunk)
            if sum(map(len, chunks)) > MAX_TOKEN_BYTES:
                raise UserError(f"--token-fd {descriptor} carried more than a token", EXIT_CONFIG)
    finally:
        os.close(descriptor)
    return b"".join(chunks)
