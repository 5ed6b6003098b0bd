"""Revert each rule in turn and watch its test go red: ``bin/prove``.

Each entry of ``tests/proofs/catalogue.py`` names a rule, the exact text in the source that
holds it (which must occur exactly once), what that text becomes without the rule, and the
tests that must fail then. The runner applies one mutation at a time, runs those tests,
requires them to fail, and restores the file whatever happens. A mutation whose tests still
pass is a rule with no proof: the run fails and says which.

Not part of ``bin/test`` (it runs the suite dozens of times); run it after changing a rule,
and paste its table into ``tests/PROOFS.md``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from tests.proofs.catalogue import MUTATIONS, Mutation

REPOSITORY = Path(__file__).resolve().parents[2]


def prove(mutation: Mutation) -> tuple[bool, str]:
    """Apply ``mutation``, run its tests, restore. True when the tests went red."""
    path = REPOSITORY / mutation.path
    original = path.read_text()
    mutated = original
    for find, replace in mutation.changes:
        found = mutated.count(find)
        if found != 1:
            return False, f"the rule's text occurs {found} times in {mutation.path} (the catalogue is stale)"
        mutated = mutated.replace(find, replace)
    try:
        path.write_text(mutated)
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *mutation.tests],
            cwd=REPOSITORY,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    finally:
        path.write_text(original)
    lines = [line for line in result.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    evidence = lines[0] if lines else result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    return result.returncode not in (0, 5), evidence


def main() -> int:
    parser = argparse.ArgumentParser(prog="bin/prove", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="run only the rules whose text contains this")
    parser.add_argument("--list", action="store_true", help="list the rules and their tests, run nothing")
    parser.add_argument(
        "--part", default="1/1", help="K/N: only every N-th rule from the K-th (runs in parallel clones)"
    )
    args = parser.parse_args()
    part, parts = (int(number) for number in args.part.split("/"))
    chosen = [mutation for mutation in MUTATIONS if args.only.lower() in mutation.rule.lower()][
        part - 1 :: parts
    ]
    if args.list:
        for mutation in chosen:
            print(f"{mutation.rule}  ->  {' '.join(mutation.tests)}")
        return 0
    print("| rule | test | seen red |")
    print("|---|---|---|")
    unproven = 0
    for number, mutation in enumerate(chosen, 1):
        started = time.monotonic()
        red, evidence = prove(mutation)
        unproven += not red
        tests = "<br>".join(f"`{test}`" for test in mutation.tests)
        verdict = f"red: {evidence}" if red else f"**NOT RED**: {evidence}"
        print(f"| {mutation.rule} | {tests} | {verdict} |", flush=True)
        print(f"[{number}/{len(chosen)}] {time.monotonic() - started:.1f} s", file=sys.stderr)
    print(f"\n{len(chosen) - unproven} of {len(chosen)} rules seen red without them.")
    return 1 if unproven else 0


if __name__ == "__main__":
    sys.exit(main())
