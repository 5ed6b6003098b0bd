"""Every subcommand of ``bin/connect`` and ``bin/outbox-resolve``, driven with generated
arguments, ends with an exit code from the documented set, never a traceback, an error said as
one line starting ``error:`` (never argparse's ``usage:``), and nothing recorded lost: the
ledger's records are all still there, in a ledger that still carries the connector's identity.

The options each subcommand takes are read from its own parser, so a new option is driven as
soon as it exists. Their values come from what broke the connector before: ids and times too
large to store, negative and non-numeric ones, non-ASCII, control characters, unknown
placeholders, paths to nothing, to a file, to a directory, ids in other scripts' digits or with
a sign or a space, free text with a newline, an ANSI escape, DEL or BEL. The
state is a real configured state directory whose Basecamp is a closed port on 127.0.0.1, so
nothing reaches a network and a command that gets that far ends at "could not ask" (6). Two
families need more than arguments and run apart: the same commands on a full disk (a real tmpfs,
skipped without the privilege to mount), and as real processes with stdout on ``/dev/full`` or
stderr closed. Deeply nested JSON (a configuration, token or import file) is not among them: its
bounded decoder is the hardening issue's, and its family belongs beside it.

In-process through the entry functions, for speed; the commands that serve until stopped
(``standin``, ``mcp``, ``demo``) run as a few real processes, and one that is still running
after a bound has started, not crashed.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shell.basecamp.standin.server import StandIn
from shell.cli.main import build_parser
from shell.cli.main import main as connect
from shell.cli.resolve import build_parser as build_resolve_parser
from shell.cli.resolve import main as resolve
from shell.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_CONFIG,
    EXIT_FAILURE,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
)
from shell.ledger.connection import open_ledger, open_ledger_read_only
from shell.state.pair_lock import RUNTIME_ENV
from tests.support.configured import configure_connector
from tests.support.disks import fill, mounted_tmpfs
from tests.support.ledger_world import LedgerWorld

REPOSITORY = Path(__file__).resolve().parents[2]
DOCUMENTED = {EXIT_OK, EXIT_USAGE, EXIT_CONFIG, EXIT_NOT_FOUND, EXIT_REFUSED, EXIT_UNAVAILABLE}
"""What a command answers for any input: ``EXIT_FAILURE`` (1) is the demo's and doctor's verdict
alone (``FINDS_WRONG``), and a traceback's exit is 1 too, so no other command may answer it."""
FINDS_WRONG = ("demo", "doctor")
IN_PROCESS = ("setup", "run", "status", "redispatch", "discard", "shadow promote", "import", "doctor")
"""Each a command's words (``shadow promote``: a verb of a command)."""
SERVING = ("standin", "mcp", "demo")
SERVING_BOUND_SECONDS = 4.0


class Places:
    """The paths a generated argument may name, made once per module."""

    def __init__(self, root: Path, state: Path) -> None:
        self.state = state
        self.missing = root / "missing" / "nothing"
        self.file = root / "a-file"
        self.file.write_text("not a configuration\n")
        self.directory = root / "a-directory"
        self.directory.mkdir(mode=0o700, exist_ok=True)
        self.non_ascii_token = root / "token-non-ascii"
        self.non_ascii_token.write_text("tök€n\n")
        self.non_ascii_token.chmod(0o600)
        self.ledger = state / "ledger.sqlite3"

    def all(self) -> list[str]:
        return [str(path) for path in (self.state, self.missing, self.file, self.directory,
                                       self.non_ascii_token, self.ledger)]  # fmt: skip


NASTY = [
    "", " ", "0", "-1", "7", "9" * 30, "1e30", "-1e30", "nan", "inf", "99999999h", "1h30m", "0s",
    "500ms", "tök€n", "\x07", "a\nb", "{promt}", "true {promt}", "'unterminated", "1=/nonexistent",
    "x=y", "=", "--", "-", "https://", "ftp://x", "\u202e", "%s%n", "../../etc/passwd",
    "٣", "７", "+7", " 7", "7 ", "²", "7_0", "a\x1b[31mb", "ana\x7f", "bell\x07", "two\nlines", "\x1b]0;t\x07",
]  # fmt: skip
"""What broke the connector before: other scripts' digits, a sign
or a space around an id, control characters in free text."""


def values(places: Places) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(NASTY),
        st.sampled_from(places.all()),
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=12),
    )


def options_of(parser: argparse.ArgumentParser) -> tuple[list[tuple[str, bool]], int]:
    """Every option (its first spelling, whether it takes a value) and how many positionals."""
    options: list[tuple[str, bool]] = []
    positionals = 0
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._VersionAction | argparse._SubParsersAction):
            continue
        if action.option_strings:
            options.append((action.option_strings[0], action.nargs != 0))
        else:
            positionals += 1
    return options, positionals


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


def argv_for(
    command: list[str], parser: argparse.ArgumentParser, places: Places, where: list[str]
) -> st.SearchStrategy[list[str]]:
    """``command``, some of its options with generated values, generated positionals, and
    usually ``where`` (the state) so the command gets past finding it."""
    options, positionals = options_of(parser)
    value = values(places)
    one = st.sampled_from(options).flatmap(
        lambda option: value.map(lambda text: [option[0], text]) if option[1] else st.just([option[0]])
    ) if options else st.just([])  # fmt: skip
    return st.tuples(
        st.lists(one, max_size=4),
        st.lists(value, min_size=0, max_size=positionals + 1),
        st.booleans(),
    ).map(lambda drawn: [*command, *(where if drawn[2] else []), *itertools.chain(*drawn[0]), *drawn[1]])


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Places:
    root = tmp_path_factory.mktemp("any-arguments")
    os.chmod(root, 0o700)
    # module-scoped, so set up before conftest's per-test runtime directory: its own, never this
    # machine's (a setup here once left a pair record for the stand-in's ids in the real one)
    with pytest.MonkeyPatch.context() as patch, StandIn(world="demo") as standin:
        patch.setenv(RUNTIME_ENV, str(root / "runtime"))
        closed = StandIn(world="demo")
        nowhere = closed.base_url
        closed.stop()  # a port that was bound, then freed: nothing listens there
        state = configure_connector(standin, root, worker=("true",), base_url=nowhere)
    with open_ledger(state / "ledger.sqlite3") as ledger:  # the decisions reach their ledger
        for event_id in RECORDED:
            LedgerWorld(ledger).request(event_id)
    return Places(root, state)


@pytest.fixture(autouse=True)
def private_home(places: Places, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(places.directory / "xdg"))
    monkeypatch.setenv(RUNTIME_ENV, str(places.directory / "runtime"))
    monkeypatch.delenv("CONNECTOR_LEDGER", raising=False)


RECORDED = (7, 8, 9)
"""Records in the state's ledger: a command may decide about one, never lose it."""


def nothing_recorded_is_lost(ledger_path: Path) -> None:
    with open_ledger_read_only(ledger_path) as ledger, ledger.read() as connection:
        kept = {row[0] for row in connection.execute("SELECT id FROM events")}
    assert set(RECORDED) <= kept, f"records lost: {set(RECORDED) - kept}"


def said_as_one_error(code: int, err: str, argv: list[str]) -> None:
    """An error is said in lines starting ``error:`` (a configuration's problems, one a line), never
    argparse's two-line ``usage:``; a traceback never."""
    assert "Traceback" not in err, f"{argv!r}:\n{err}"
    assert "usage:" not in err, f"{argv!r}:\n{err}"
    if code in (EXIT_USAGE, EXIT_CONFIG, EXIT_NOT_FOUND, EXIT_REFUSED, EXIT_UNAVAILABLE):
        lines = [line for line in err.splitlines() if line.strip()]
        assert lines, f"{argv!r} exited {code} saying nothing"
        assert lines[-1].startswith("error: "), f"{argv!r} exited {code}:\n{err}"


def ends_in_the_documented_set(entry: Callable[[list[str]], int], argv: list[str], allowed: set[int]) -> int:
    saved = {signal.SIGTERM: signal.getsignal(signal.SIGTERM), signal.SIGINT: signal.getsignal(signal.SIGINT)}
    try:
        code = entry(argv)
    except SystemExit as done:  # argparse: --help (0) or bad usage (2)
        code = done.code if isinstance(done.code, int) else EXIT_USAGE
    except BaseException:
        pytest.fail(f"{argv!r} raised:\n{traceback.format_exc()}")
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
    assert code in allowed, f"{argv!r} exited {code}"
    return code


ALWAYS_TRIED = {"run": [["run", "--poll-seconds", "1e30"]]}
"""Drawn every time, not by luck: a time longer than the clock can hold (run converts it first)."""

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.mark.slow
@pytest.mark.parametrize("command", IN_PROCESS)
def test_bin_connect_answers_any_arguments_in_the_documented_set(
    command: str, places: Places, capsys: pytest.CaptureFixture[str]
) -> None:
    words = command.split()
    parser = build_parser()
    for word in words:
        parser = subparsers(parser)[word]
    allowed = DOCUMENTED | ({EXIT_FAILURE} if command in FINDS_WRONG else set())

    @SETTINGS
    @given(argv=argv_for(words, parser, places, ["--state-dir", str(places.state)]))
    def check(argv: list[str]) -> None:
        code = ends_in_the_documented_set(connect, argv, allowed)
        said_as_one_error(code, capsys.readouterr().err, argv)
        nothing_recorded_is_lost(places.ledger)

    for argv in ALWAYS_TRIED.get(command, []):
        check = example(argv=argv)(check)
    check()


@pytest.mark.slow
@pytest.mark.parametrize("verb", ["list", "show", "sent", "abandon", "resend"])
def test_bin_outbox_resolve_answers_any_arguments_in_the_documented_set(
    verb: str, places: Places, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = subparsers(build_resolve_parser())[verb]

    @SETTINGS
    @given(argv=argv_for([verb], parser, places, ["--state-dir", str(places.state)]))
    def check(argv: list[str]) -> None:
        code = ends_in_the_documented_set(resolve, argv, DOCUMENTED)
        said_as_one_error(code, capsys.readouterr().err, argv)
        nothing_recorded_is_lost(places.ledger)

    check()


def run_bounded(argv: list[str]) -> tuple[int | None, str]:
    """A real ``bin/connect`` process; None when it was still serving at the bound (then ended)."""
    with subprocess.Popen(
        [str(REPOSITORY / "bin" / "connect"), *argv],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    ) as process:  # fmt: skip
        try:
            _, err = process.communicate(timeout=SERVING_BOUND_SECONDS)
            return process.returncode, err
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            _, err = process.communicate()
            return None, err


@pytest.mark.slow
@pytest.mark.parametrize("command", SERVING)
def test_the_serving_commands_answer_any_arguments_in_the_documented_set(command: str, places: Places) -> None:
    parser = subparsers(build_parser())[command]
    where = ["--ledger", str(places.ledger)] if command == "mcp" else []

    examples = 15 if command == "mcp" else 6  # mcp refuses fast: no token is ever given it here

    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(argv=argv_for([command], parser, places, where))
    def check(argv: list[str]) -> None:
        code, err = run_bounded(argv)
        assert "Traceback" not in err, f"{argv!r}:\n{err}"
        allowed = DOCUMENTED | ({EXIT_FAILURE} if command in FINDS_WRONG else set()) | {EXIT_BROKEN_PIPE}
        assert code is None or code in allowed, f"{argv!r} exited {code}: {err}"

    check()



@pytest.fixture(scope="module")
def full_state(places: Places, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of the places' state on a tmpfs written full (skipped without the privilege to mount)."""
    with mounted_tmpfs(tmp_path_factory.mktemp("full-disk") / "mnt", size="4m") as mount:
        state = mount / "state"
        shutil.copytree(places.state, state)
        nothing_recorded_is_lost(state / "ledger.sqlite3")  # its -shm made while there is room
        fill(mount)
        yield state


@pytest.mark.slow
@pytest.mark.parametrize("command", [name for name in IN_PROCESS if name != "doctor"])
def test_bin_connect_answers_any_arguments_on_a_full_disk_in_the_documented_set(
    command: str, places: Places, full_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    words = command.split()
    parser = build_parser()
    for word in words:
        parser = subparsers(parser)[word]

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(argv=argv_for(words, parser, places, ["--state-dir", str(full_state)]))
    def check(argv: list[str]) -> None:
        code = ends_in_the_documented_set(connect, argv, DOCUMENTED)
        said_as_one_error(code, capsys.readouterr().err, argv)
        nothing_recorded_is_lost(full_state / "ledger.sqlite3")

    check()


STREAMS = ("stdout on /dev/full", "stdout closed", "stderr closed")


@pytest.mark.slow
@pytest.mark.parametrize("command", ["status", "discard", "hold", "redispatch", "import", "doctor"])
def test_bin_connect_answers_any_arguments_with_an_unwritable_stream_in_the_documented_set(
    command: str, places: Places
) -> None:
    parser = subparsers(build_parser())[command]
    allowed = DOCUMENTED | ({EXIT_FAILURE} if command in FINDS_WRONG else set())

    @settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(argv=argv_for([command], parser, places, ["--state-dir", str(places.state)]), stream=st.sampled_from(STREAMS))
    def check(argv: list[str], stream: str) -> None:
        code, err = run_with_unwritable(argv, stream)
        assert code in allowed, f"{argv!r} with {stream} exited {code}: {err}"
        if stream != "stderr closed":
            said_as_one_error(code, err, argv)
            if stream.startswith("stdout") and code == EXIT_CONFIG and "standard output" in err:
                assert "ledger" not in err.splitlines()[-1].partition(";")[0], err
        nothing_recorded_is_lost(places.ledger)

    check()


def run_with_unwritable(argv: list[str], stream: str) -> tuple[int, str]:
    """A real ``bin/connect`` process with one standard stream unwritable: its code and stderr."""
    closed = 1 if stream == "stdout closed" else 2 if stream == "stderr closed" else None
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [str(REPOSITORY / "bin" / "connect"), *argv], stdin=subprocess.DEVNULL,
            stdout=full if stream == "stdout on /dev/full" else subprocess.DEVNULL,
            stderr=subprocess.DEVNULL if closed == 2 else subprocess.PIPE, text=True, timeout=120, check=False,
            preexec_fn=None if closed is None else (lambda: os.close(closed)),
        )  # fmt: skip
    return done.returncode, done.stderr or ""
