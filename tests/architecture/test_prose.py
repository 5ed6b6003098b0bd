"""Prose a reader can trust: every "rule N" resolves, and no module of core/, shell/, bin/ or
tests/ cites a document outside the repository (say what is meant in the repository's words).

A "rule N" in a module of core/ or shell/ names rule N of that module's docstring: an item
"N." of its "Rules:" list or a paragraph opening "Rule N:". "rule N of core.x" (or shell.x),
or "``core.x`` rule N", names rule N of that module's docstring."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "shell")

MODULE = r"((?:core|shell)(?:\.\w+)+)"
REFERENCE = re.compile(rf"(?:``{MODULE}``\s+)?\brule (\d+)(?: of (?:``)?{MODULE}(?:``)?)?")
NUMBERED = re.compile(r"^\s*(\d+)\.\s")
RULES = re.compile(r"^Rules\b.*:$")  # "Rules:" or "Rules (one policy for every caller):"
PARAGRAPH = re.compile(r"^\s*Rule (\d+)[:.]")

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


def _rules(path: Path) -> set[int]:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    lines = doc.splitlines()
    found = {int(m.group(1)) for line in lines if (m := PARAGRAPH.match(line))}
    heads = [i for i, line in enumerate(lines) if RULES.match(line)]
    if heads:
        start = heads[0]
        found |= {int(m.group(1)) for line in lines[start + 1 :] if (m := NUMBERED.match(line))}
    return found


def dangling_rule_references() -> list[str]:
    modules = _modules()
    rules = {_dotted(p): _rules(p) for p in modules}
    found = []
    for path in modules:
        here = _dotted(path)
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for match in REFERENCE.finditer(line):
                target = match.group(1) or match.group(3) or here
                if int(match.group(2)) not in rules.get(target, set()):
                    where = f"{path.relative_to(ROOT)}:{number}"
                    found.append(f"{where}: {match.group(0)!r} names no rule {match.group(2)} of {target}")
    return found


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


def _report(found: list[str]) -> str:
    return f"{len(found)} to fix:\n" + "\n".join(found)


def test_every_rule_reference_names_a_numbered_rule_of_its_module_or_the_module_it_names():
    found = dangling_rule_references()
    assert not found, _report(found)


def test_no_production_module_cites_a_document_outside_the_repository():
    found = [line for line in outside_citations() if line.startswith(("core/", "shell/", "bin/"))]
    assert not found, _report(found)


def test_no_test_cites_a_document_outside_the_repository():
    found = [line for line in outside_citations() if line.startswith("tests/")]
    assert not found, _report(found)
