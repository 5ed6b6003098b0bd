"""``bin/prove`` itself: its catalogue anchors, it counts only real failures as red, and it never
touches the checkout, even when killed mid-proof."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.proofs.anchors import NamedTests, SourceTree, StaleCatalogue, mutated
from tests.proofs.catalogue import MUTATIONS
from tests.proofs.mutation import rule
from tests.proofs.record import PROOFS, problems
from tests.proofs.runner import (
    COPY_PREFIX,
    OWNER_FILE,
    REPOSITORY,
    Verdict,
    anchor,
    prove,
    remove_abandoned_copies,
    tree_files,
)

RULE_TEXT = "    return amount + 1\n"


def test_every_catalogue_entry_anchors_to_one_place_in_the_tree() -> None:
    tree, index = SourceTree(REPOSITORY), NamedTests(REPOSITORY)
    stale = []
    for mutation in MUTATIONS:
        try:
            anchor(mutation, tree, index)
        except StaleCatalogue as why:
            stale.append(f"{mutation.rule}: {why}")
    assert stale == []
    assert len({mutation.rule for mutation in MUTATIONS}) == len(MUTATIONS), "every rule is named once"


def test_every_catalogue_entry_applies_and_leaves_its_module_compiling() -> None:
    tree, broken = SourceTree(REPOSITORY), []
    for mutation in MUTATIONS:
        places = [tree.locate(find, replace) for find, replace in mutation.changes]
        for path, text in mutated({place.path: tree.text(place.path) for place in places}, places).items():
            if path.endswith(".py"):
                try:
                    compile(text, path, "exec")
                except SyntaxError as error:
                    broken.append(f"{mutation.rule}: {path}: {error}")
    assert broken == []


def test_the_record_holds_every_rule_seen_red_for_its_mutation_as_it_is() -> None:
    found = problems(PROOFS.read_text(), MUTATIONS)
    assert not found, f"{len(found)} rules the record does not hold:\n" + "\n".join(found[:40])


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """A tree of one rule (``core/rules.py``) and its test, with the outcomes plugin beside it."""
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "__init__.py").write_text("")
    (tmp_path / "core" / "rules.py").write_text(f"def next_amount(amount: int) -> int:\n{RULE_TEXT}")
    (tmp_path / "tests" / "proofs").mkdir(parents=True)
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "proofs" / "__init__.py").write_text("")
    shutil.copy(
        REPOSITORY / "tests" / "proofs" / "outcomes.py", tmp_path / "tests" / "proofs" / "outcomes.py"
    )
    (tmp_path / "tests" / "test_rules.py").write_text(
        "from core.rules import next_amount\n\n\ndef test_the_next_amount_is_one_more() -> None:\n"
        "    assert next_amount(1) == 2\n"
    )
    return tmp_path


def verdict_of(tree_root: Path, replace: str) -> Verdict:
    mutation = rule("the next amount is one more", RULE_TEXT, replace, "test_the_next_amount_is_one_more")
    return prove(anchor(mutation, SourceTree(tree_root), NamedTests(tree_root)), tree_root).verdict


def test_a_mutation_its_test_catches_is_red(tiny: Path) -> None:
    assert verdict_of(tiny, "    return amount\n") is Verdict.red


def test_a_mutation_its_test_misses_is_green(tiny: Path) -> None:
    assert verdict_of(tiny, "    return 2 if amount == 1 else amount\n") is Verdict.green


def test_a_mutation_that_breaks_collection_is_broken_never_red(tiny: Path) -> None:
    assert verdict_of(tiny, "    return amount +\n") is Verdict.broken


def test_a_mutation_whose_test_does_not_exist_is_stale(tiny: Path) -> None:
    mutation = rule("a rule", RULE_TEXT, "", "test_nobody_wrote")
    with pytest.raises(StaleCatalogue, match="names 0 things"):
        anchor(mutation, SourceTree(tiny), NamedTests(tiny))


def test_a_rule_rewrapped_and_recommented_stays_anchored_and_red(tiny: Path) -> None:
    rules = tiny / "core" / "rules.py"
    rules.write_text("def next_amount(amount: int) -> int:\n    return amount + \\\n        1  # one more\n")
    assert verdict_of(tiny, "    return amount\n") is Verdict.red
    assert verdict_of(tiny, "    return 2 if amount == 1 else amount\n") is Verdict.green


def test_a_replacement_follows_its_code_into_a_deeper_block(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "rules.py").write_text(
        "class Amounts:\n    def next(self, amount: int) -> int:\n        if amount:  # a rule\n"
        "            return amount + 1\n        return 1\n"
    )
    tree = SourceTree(tmp_path)
    place = tree.locate("    if amount:\n        return amount + 1\n", "    if amount:\n        return amount\n")
    assert place.applied(tree.text("core/rules.py")) == (
        "class Amounts:\n    def next(self, amount: int) -> int:\n        if amount:\n"
        "            return amount\n        return 1\n"
    )


def test_a_fragment_cut_inside_a_string_anchors_only_as_written(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "rules.py").write_text('NOTE = (\n    "one "\n    "two"\n)\n')
    tree = SourceTree(tmp_path)
    assert tree.locate('"one "\n    "tw', '"one "\n    "tw').start == 13
    with pytest.raises(StaleCatalogue, match="0 times"):
        tree.locate('"one " "tw', "")


def test_a_rule_whose_tokens_occur_twice_and_whose_text_nowhere_is_stale(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "rules.py").write_text("a = b  +  1\nc = (b +\n     1)\n")
    with pytest.raises(StaleCatalogue, match="2 times"):
        SourceTree(tmp_path).locate("b + 1", "b")


def test_a_rule_written_as_a_whole_line_never_anchors_inside_a_longer_call(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "rules.py").write_text("def gap(ledger):\n    intake.record_gap(ledger, 1)\n")
    with pytest.raises(StaleCatalogue, match="0 times"):
        SourceTree(tmp_path).locate("    record_gap(ledger, 1)\n", "    pass\n")
    place = SourceTree(tmp_path).locate("    intake.record_gap(ledger, 1)\n", "    pass\n")
    assert place.applied((tmp_path / "core" / "rules.py").read_text()) == "def gap(ledger):\n    pass\n"


def test_the_copy_is_restored_after_each_proof(tiny: Path) -> None:
    before = (tiny / "core" / "rules.py").read_text()
    verdict_of(tiny, "    return amount\n")
    assert (tiny / "core" / "rules.py").read_text() == before


def _copies_of(owner: int) -> set[Path]:
    """The copies ``bin/prove`` process ``owner`` made (each names its owner's pid inside)."""
    copies = set()
    for copy in Path(tempfile.gettempdir()).glob(f"{COPY_PREFIX}*"):
        with contextlib.suppress(OSError):
            if (copy / OWNER_FILE).read_text() == str(owner):
                copies.add(copy)
    return copies


def _fingerprint(root: Path) -> dict[str, str]:
    return {name: hashlib.sha256((root / name).read_bytes()).hexdigest() for name in tree_files(root)}


@pytest.mark.slow
def test_a_run_killed_mid_proof_leaves_the_checkout_untouched() -> None:
    before = _fingerprint(REPOSITORY)
    prover = subprocess.Popen(
        [sys.executable, "-m", "tests.proofs.runner", "--only", "a stored time is UTC"],
        cwd=REPOSITORY,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert prover.stderr is not None
        line = prover.stderr.readline()
        assert line.startswith("proving:"), line
        time.sleep(0.3)  # its mutation is applied and its tests run in the copy
    finally:
        os.killpg(prover.pid, signal.SIGKILL)
        prover.wait()
    assert _fingerprint(REPOSITORY) == before
    left = _copies_of(prover.pid)  # not another run's: a bin/prove beside this suite keeps its own
    assert left, "the killed run left its copy"
    remove_abandoned_copies()
    assert not any(copy.exists() for copy in left), "the next run removes a killed run's copy"


def test_names_chooses_exactly_the_rules_a_file_names_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    names = tmp_path / "names.txt"
    names.write_text(f"{MUTATIONS[0].rule}\n{MUTATIONS[-1].rule}\n")
    command = [sys.executable, "-m", "tests.proofs.runner", "--names", str(names)]
    listed = subprocess.run([*command, "--list"], capture_output=True, text=True, check=True, cwd=REPOSITORY)
    assert [line.split("  ->  ")[0] for line in listed.stdout.splitlines()] == [
        MUTATIONS[0].rule,
        MUTATIONS[-1].rule,
    ]
    names.write_text("no rule is called this\n")
    refused = subprocess.run(
        [*command, "--check"], check=False, capture_output=True, text=True, cwd=REPOSITORY
    )
    assert refused.returncode == 2
    assert "no such rule: 'no rule is called this'" in refused.stderr
