"""Prose a reader can trust: no module of core/, shell/, bin/ or tests/ cites a document outside
the repository (say what is meant in the repository's words); no rule is cited by a number that
another file must keep in step (cite it by its name or its test), and none of core/ or shell/ opens
a numbered list of rules; docstrings are at most a tenth of core/ and shell/."""

from __future__ import annotations

import re
from pathlib import Path

from tests.architecture.docstring_share import docstrings

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "shell")

# Written split so this file does not cite what it forbids.
OUTSIDE = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bspec(?:ification)? \d+(?:\.\d+)*\b",
        r"(?<![\w&/])#\d{3,}\b",
        r"\bissues? \d+\b",
        r"\.\./" + "shared",
        r"\bthe " + r"brief\b",
        r"\breference " + r"PR\b",
        "/work/" + "shared",
        r"\bconnector-" + r"spec\b",
        r"\blifecycle-outbox-" + r"pr\b",
        r"\bthe " + r"spec(?:'s)?\b",
        r"\b(?:the|lifecycle) " + r"PR's\b",
        r"\bthe " + r"lead\b",
        r"\b(?:review )?" + r"findings? \d",  # a review kept elsewhere
        r"\bthe " + r"reference(?:'s)? (?!floor)",  # the implementation this one was modelled on
        r"\bstop " + r"\d+'s\b",  # a stop of the work, not of the code
    )
)


def _modules() -> list[Path]:
    found = (p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))
    return sorted(p for p in found if "__pycache__" not in p.parts)


def _dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def outside_citations() -> list[str]:
    files = list(_modules())
    files += [p for p in (ROOT / "bin").iterdir() if p.is_file()]
    files += [p for p in (ROOT / "tests").rglob("*.py") if p != Path(__file__).resolve()]
    found = []
    for path in sorted(set(files)):
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for pattern in OUTSIDE:
                if match := pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: cites {match.group(0)!r}")
    return found


NUMBERED_RULE = re.compile(r"\b[Rr]ules? \d+[a-z]?\b|^\s*Rules\b[^:\n]*:\s*$|^\s*Rule \d+[:.]", re.MULTILINE)
DOCSTRING_SHARE = 0.10


def rules_cited_by_number() -> list[str]:
    found = []
    for path in _modules():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if match := NUMBERED_RULE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0).strip()!r}")
    return found


CITED_ELSEWHERE = re.compile(r"(?:``[\w.]+``|\b[a-z_]+(?:\.[a-z_]+)+|\bARCHITECTURE)(?:'s?)? [Rr]ules? \d+|\b[Rr]ules? \d+ of \S+")
LOCAL_LIST = re.compile(r"^\s*1\. ", re.MULTILINE)


def rules_a_test_cites_by_number() -> list[str]:
    """A test may number the rules its own docstring lists; it cites any other module's by name."""
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path == Path(__file__).resolve() or "__pycache__" in path.parts:
            continue
        text = path.read_text()
        tree_doc = text.split('"""', 2)[1] if text.lstrip().startswith('"""') else ""
        pattern = CITED_ELSEWHERE if LOCAL_LIST.search(tree_doc) else NUMBERED_RULE
        for number, line in enumerate(text.splitlines(), 1):
            if match := pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0).strip()!r}")
    return found


def _report(found: list[str]) -> str:
    return f"{len(found)} to fix:\n" + "\n".join(found)


def test_no_production_module_cites_a_document_outside_the_repository():
    found = [line for line in outside_citations() if line.startswith(("core/", "shell/", "bin/"))]
    assert not found, _report(found)


def test_no_test_cites_a_document_outside_the_repository():
    found = [line for line in outside_citations() if line.startswith("tests/")]
    assert not found, _report(found)


def test_no_rule_is_cited_by_number_and_no_module_opens_a_numbered_list_of_rules():
    found = rules_cited_by_number()
    assert not found, _report(found)


def test_no_test_cites_a_rule_by_a_number_its_own_docstring_does_not_give():
    found = rules_a_test_cites_by_number()
    assert not found, _report(found)


def test_docstrings_are_at_most_a_tenth_of_core_and_shell():
    modules = _modules()
    lines = sum(len(path.read_text().splitlines()) for path in modules)
    documented = sum(count for path in modules for _, count in docstrings(path))
    assert documented <= DOCSTRING_SHARE * lines, f"docstrings are {documented} of {lines} lines"
