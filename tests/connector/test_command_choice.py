"""``bin/connect`` imports the chosen subcommand's module alone; ``--help`` lists every subcommand
from the summary table without importing one, and the quick choice is the one argparse makes."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from shell.cli.main import COMMANDS, SUMMARIES, build_parser, chosen, module_name

REPOSITORY = Path(__file__).resolve().parents[2]
PROBE = (
    "import json, sys\n"
    "from shell.cli.main import main\n"
    "try:\n"
    "    code = main(sys.argv[1:])\n"
    "except SystemExit as done:\n"
    "    code = done.code\n"
    "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n"
)
HEAVY = {
    "urllib3", "websockets", "hypothesis", "shell.basecamp.client", "shell.basecamp.standin.server",
    "shell.connector", "shell.worker.driver", "shell.ledger.outbox", "shell.ledger.records",
    "shell.ledger.rules", "returns", "core.edges", "importlib.resources",
}  # fmt: skip
"""What status never needs: HTTP, the stand-in, the worker, the ledger's writing side (the hold's
among it: ``shell.ledger.hold``, which status imports to read the marker, imports it only when it
writes), the edge tables and ``returns`` (a tenth of its start; it decides nothing), and
``importlib.resources`` (the migrations are found by path)."""


def probe(*argv: str) -> tuple[int, set[str], str]:
    """``bin/connect ARGV`` in a fresh interpreter: its exit code, every module it imported, stdout."""
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    done = subprocess.run(
        [sys.executable, "-P", "-c", PROBE, *argv],
        capture_output=True, text=True, env=environment, timeout=60, check=True,
    )  # fmt: skip
    last = done.stdout.strip().splitlines()[-1]
    found = json.loads(last)
    return int(found["code"]), set(found["modules"]), done.stdout[: -len(last) - 1]


def commands_imported(modules: set[str]) -> set[str]:
    return {name for name in COMMANDS if module_name(name) in modules}


def test_help_lists_every_command_with_its_summary_and_imports_none() -> None:
    code, modules, shown = probe("--help")
    assert code == 0
    assert commands_imported(modules) == set()
    flat = " ".join(shown.split())
    for name, summary in SUMMARIES.items():
        assert f"{name} {summary}" in flat


def test_a_command_imports_its_own_module_and_no_other(tmp_path: Path) -> None:
    code, modules, _ = probe("status", "--state-dir", str(tmp_path / "nothing"))
    assert code == 3  # no state directory: status ran
    assert commands_imported(modules) == {"status"}
    assert not HEAVY & modules


def test_every_command_registers_the_summary_of_the_table() -> None:
    parser = build_parser()
    listed = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    assert {choice.dest: choice.help for choice in listed._choices_actions} == SUMMARIES
    assert tuple(listed.choices) == COMMANDS


def outcome(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[object, str | None]:
    """What argparse makes of ``argv`` at the top level: its exit, or the subcommand it took."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            return None, parser.parse_args(argv).command
        except SystemExit as done:
            return done.code, None


BEFORE = st.sampled_from(["-v", "--verbose", "--verb", "-h", "--version", "--", "-", "-1", "-vstatus", "--json"])
WORDS = st.sampled_from([*COMMANDS, "x", "bogus", "--json", "--state-dir", "--", "-", "-1", "Status", "run-"])
ARGV = st.tuples(st.lists(BEFORE, max_size=2), st.lists(WORDS, max_size=4)).map(lambda drawn: drawn[0] + drawn[1])


@given(argv=ARGV)
@example(argv=["-v", "status", "--json"])
@example(argv=["status", "--state-dir", "x"])
def test_the_quick_choice_is_the_subcommand_argparse_takes(argv: list[str]) -> None:
    full = build_parser()
    lazy = build_parser(tuple(name for name in COMMANDS if name == chosen(argv)), listed=COMMANDS)
    assert outcome(lazy, argv) == outcome(full, argv)
