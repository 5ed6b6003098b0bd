"""Revert each rule in turn and watch its tests go red: ``bin/prove``.

Each entry of ``tests/proofs/catalogue.py`` names a rule, the source text that holds it, what
that text becomes without the rule, and the tests that must fail then (``tests.proofs.anchors``
finds both by content and by name, so moving code costs the catalogue nothing).

The checkout is never written: every mutation is applied in a temporary copy of the tree
(tracked and untracked files, not ignored ones; ``.venv`` and ``.claude-code`` linked, not
copied), one copy per job, restored there after each run; a run killed at any moment leaves the
checkout as it was, and its copy is removed by the next run. Red means a named test failed, as
the pytest plugin ``tests.proofs.outcomes`` says: a mutation that stops the tests from being
collected, or after which none of the named tests ran, is *broken*, never red; one whose tests
pass is *green*; either fails the run. A catalogue whose text or test names no single place is
stale, and fails the run before anything is proven (``--check`` does only that).

Not part of ``bin/test`` (it runs the suite hundreds of times); run it after changing a rule
with ``--record``, which keeps ``tests/PROOFS.md``'s record (``tests.proofs.record``).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from tests.proofs.anchors import Located, NamedTests, SourceTree, StaleCatalogue, mutated
from tests.proofs.catalogue import MUTATIONS
from tests.proofs.mutation import Mutation
from tests.proofs.record import HEAD, PROOFS, Row, fingerprint, rewritten, unproven

REPOSITORY = Path(__file__).resolve().parents[2]
COPY_PREFIX = "bin-prove-"
OWNER_FILE = ".bin-prove-owner"
TEST_TIMEOUT_SECONDS = 900


class Verdict(StrEnum):
    red = "red"
    green = "green"
    broken = "broken"
    stale = "stale"


@dataclass(frozen=True, slots=True)
class Proof:
    mutation: Mutation
    verdict: Verdict
    evidence: str
    seconds: float


@dataclass(frozen=True, slots=True)
class Anchored:
    """A mutation with its text found in the tree and its tests turned into node ids."""

    mutation: Mutation
    places: tuple[Located, ...]
    node_ids: tuple[str, ...]


def anchor(mutation: Mutation, tree: SourceTree, index: NamedTests) -> Anchored:
    """Raises ``StaleCatalogue`` when the entry names no single place."""
    places = tuple(tree.locate(find, replace) for find, replace in mutation.changes)
    return Anchored(mutation, places, index.node_ids(mutation.tests))


# -- the copy -------------------------------------------------------------------------


def tree_files(root: Path) -> list[str]:
    """The files a copy holds: git's tracked and untracked ones, not the ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and (root / name).is_file()]


def remove_abandoned_copies() -> None:
    """Copies whose run was killed: their owner's pid is gone."""
    for copy in Path(tempfile.gettempdir()).glob(f"{COPY_PREFIX}*"):
        try:
            owner = int((copy / OWNER_FILE).read_text())
            os.kill(owner, 0)
        except ProcessLookupError:
            shutil.rmtree(copy, ignore_errors=True)
        except (OSError, ValueError):
            continue


def make_copy(root: Path) -> Path:
    copy = Path(tempfile.mkdtemp(prefix=COPY_PREFIX))
    (copy / OWNER_FILE).write_text(str(os.getpid()))
    for name in tree_files(root):
        target = copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target)
    for installed in (".venv", ".claude-code"):
        if (root / installed).exists():
            (copy / installed).symlink_to(root / installed)
    return copy


# -- one proof ------------------------------------------------------------------------


def prove(anchored: Anchored, copy: Path) -> Proof:
    """Apply ``anchored`` in ``copy``, run its tests, restore the copy; the verdict."""
    started = time.monotonic()
    originals: dict[str, str] = {}
    outcomes_file = copy / ".bin-prove-outcomes.json"
    outcomes_file.unlink(missing_ok=True)
    try:
        originals = {place.path: (copy / place.path).read_text("utf-8") for place in anchored.places}
        for relative, text in mutated(originals, anchored.places).items():
            (copy / relative).write_text(text, "utf-8")
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-x",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "tests.proofs.outcomes",
                *anchored.node_ids,
            ],
            cwd=copy,
            env={**os.environ, "PROVE_OUTCOMES": str(outcomes_file)},
            capture_output=True,
            text=True,
            timeout=TEST_TIMEOUT_SECONDS,
            check=False,
        )
    finally:
        for relative, text in originals.items():
            (copy / relative).write_text(text, "utf-8")
    verdict, evidence = judge(outcomes_file, anchored.node_ids, result.stdout)
    return Proof(anchored.mutation, verdict, evidence, time.monotonic() - started)


def judge(outcomes_file: Path, node_ids: tuple[str, ...], stdout: str) -> tuple[Verdict, str]:
    """Red, green or broken, from what the plugin wrote."""
    if not outcomes_file.exists():
        return Verdict.broken, _last_line(stdout) or "pytest wrote no outcomes"
    written = json.loads(outcomes_file.read_text())
    outcomes: dict[str, str] = written["tests"]
    if written["uncollectable"]:
        return Verdict.broken, f"could not collect {written['uncollectable'][0]}"
    ours = {node: outcome for node, outcome in outcomes.items() if _named(node, node_ids)}
    failed = [node for node, outcome in ours.items() if outcome == "failed"]
    if failed:
        quoted = next((line for line in stdout.splitlines() if line.startswith(("FAILED", "ERROR"))), "")
        return Verdict.red, _without_paths(quoted or f"FAILED {failed[0]}")
    if not any(outcome == "passed" for outcome in ours.values()):
        return Verdict.broken, "none of the named tests ran"
    return Verdict.green, _last_line(stdout)


def _named(node: str, node_ids: tuple[str, ...]) -> bool:
    """``node`` (perhaps parametrized) is one of ``node_ids`` or inside a named module."""
    bare = node.split("[", 1)[0]
    return any(bare == wanted or bare.startswith(wanted + "::") for wanted in node_ids)


def _without_paths(line: str) -> str:
    """A pytest line with its tests named as the catalogue names them: no file, no class."""
    return re.sub(r"\S*\.py::(?:\w+::)?", "", line.split(" - ", 1)[0])


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


# -- the run --------------------------------------------------------------------------------


def anchor_all(mutations: list[Mutation], root: Path) -> tuple[list[Anchored], list[Proof]]:
    tree, index = SourceTree(root), NamedTests(root)
    anchored: list[Anchored] = []
    stale: list[Proof] = []
    for mutation in mutations:
        try:
            anchored.append(anchor(mutation, tree, index))
        except StaleCatalogue as why:
            stale.append(Proof(mutation, Verdict.stale, str(why), 0.0))
    return anchored, stale


def run_all(anchored: list[Anchored], jobs: int) -> list[Proof]:
    """Prove each entry in one of ``jobs`` copies; the proofs in catalogue order."""
    remove_abandoned_copies()
    work: queue.Queue[tuple[int, Anchored]] = queue.Queue()
    for number, entry in enumerate(anchored):
        work.put((number, entry))
    proofs: dict[int, Proof] = {}
    lock = threading.Lock()

    def job() -> None:
        copy = make_copy(REPOSITORY)
        try:
            while True:
                try:
                    number, entry = work.get_nowait()
                except queue.Empty:
                    return
                print(f"proving: {entry.mutation.rule}", file=sys.stderr, flush=True)
                proof = prove(entry, copy)
                with lock:
                    proofs[number] = proof
                    print(
                        f"[{len(proofs)}/{len(anchored)}] {proof.verdict} {proof.seconds:.1f} s"
                        f"  {proof.mutation.rule}",
                        file=sys.stderr,
                        flush=True,
                    )
        finally:
            shutil.rmtree(copy, ignore_errors=True)

    threads = [threading.Thread(target=job, daemon=True) for _ in range(max(1, jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [proofs[number] for number in sorted(proofs)]


def recorded(proof: Proof) -> Row:
    seen = f"red: {proof.evidence}" if proof.verdict is Verdict.red else f"**{proof.verdict.upper()}**: {proof.evidence}"
    return Row(proof.mutation.rule, proof.mutation.tests, seen, fingerprint(proof.mutation))


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="bin/prove",
        description="Revert each catalogued rule in a temporary copy of the tree and require its tests to fail.",
        epilog=(
            "Exit codes: 0 every chosen rule red; 1 a rule stayed green, broke the tests' collection, "
            "or its catalogue entry is stale; 2 --names names no rule. "
            "Example, after a change: bin/prove --unrecorded --record --jobs 2"
        ),
    )
    parser.add_argument("--only", default="", help="only the rules whose names contain this text")
    parser.add_argument(
        "--names",
        type=Path,
        help="only the rules named in this file, one name a line (e.g. those changed since a commit)",
    )
    parser.add_argument("--list", action="store_true", help="list the rules and their tests; run nothing")
    parser.add_argument("--check", action="store_true", help="only check that every entry anchors")
    parser.add_argument(
        "--unrecorded",
        action="store_true",
        help="only the rules tests/PROOFS.md does not record as red for their mutation as it is now",
    )
    parser.add_argument("--record", action="store_true", help="write the proofs' rows into tests/PROOFS.md")
    parser.add_argument("--jobs", type=int, default=1, help="copies proving in parallel (default 1)")
    parser.add_argument("--part", default="1/1", help="K/N: every N-th rule from the K-th")
    args = parser.parse_args()
    part, parts = (int(number) for number in args.part.split("/"))
    named = None if args.names is None else set(filter(None, args.names.read_text().splitlines()))
    if named is not None and (unknown := named - {m.rule for m in MUTATIONS}):
        print(f"--names: no such rule: {sorted(unknown)[0]!r} (and {len(unknown) - 1} more)", file=sys.stderr)
        return 2
    unproven_now = unproven(PROOFS.read_text(), MUTATIONS)
    chosen = [
        m
        for m in MUTATIONS
        if args.only.lower() in m.rule.lower()
        and (named is None or m.rule in named)
        and (not args.unrecorded or m.rule in unproven_now)
    ][part - 1 :: parts]
    if args.list:
        for mutation in chosen:
            print(f"{mutation.rule}  ->  {' '.join(mutation.tests)}")
        return 0
    anchored, stale = anchor_all(chosen, REPOSITORY)
    for proof in stale:
        print(f"stale: {proof.mutation.rule}: {proof.evidence}", file=sys.stderr)
    if args.check or stale:
        print(f"{len(anchored)} of {len(chosen)} entries anchor to one place each.")
        return 1 if stale else 0
    proofs = run_all(anchored, args.jobs)
    print("\n".join([*HEAD, *(recorded(proof).line() for proof in proofs)]))
    if args.record:
        proven = {proof.mutation.rule: recorded(proof) for proof in proofs}
        PROOFS.write_text(rewritten(PROOFS.read_text(), MUTATIONS, proven))
    red = sum(proof.verdict is Verdict.red for proof in proofs)
    print(f"\n{red} of {len(proofs)} rules seen red without them.")
    return 0 if red == len(proofs) else 1


if __name__ == "__main__":
    sys.exit(main())
