"""Prose a reader can trust: every "rule N" resolves, nothing cites a document outside the
repository, and the README's layout names the modules that exist and no others.

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


def _layout() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1].splitlines()


def _sections(lines: list[str]) -> dict[str, str]:
    """The layout's text under each package: "shell" for shell's own lines, "shell.ledger" for
    the lines under ``ledger/``, continuation lines (indented deeper) going with their heading."""
    sections: dict[str, list[str]] = {}
    top = sub = ""
    for line in lines:
        indent = len(line) - len(line.lstrip())
        head = line.strip().split(" ", 1)[0]
        if indent == 0 and head.endswith("/"):
            top, sub = head.rstrip("/"), ""
        elif indent == 2 and top in PACKAGES:
            sub = head.rstrip("/") if head.endswith("/") else ""
        elif indent <= 2:
            top, sub = "", ""
        if top in PACKAGES:
            sections.setdefault(f"{top}.{sub}" if sub else top, []).append(line)
    return {name: "\n".join(text) for name, text in sections.items()}


def layout_mismatches() -> list[str]:
    sections = _sections(_layout())
    packages: dict[str, set[str]] = {}
    for path in _modules():
        parts = path.relative_to(ROOT).with_suffix("").parts
        if len(parts) > 3 or parts[-1] in {"__init__", "__main__"}:
            continue
        packages.setdefault(".".join(parts[:-1]), set()).add(parts[-1])
    everywhere = set().union(*packages.values())
    found = []
    for package, modules in sorted(packages.items()):
        text = sections.get(package)
        if text is None:
            found.append(f"README.md Layout: no lines for {package.replace('.', '/')}/")
            continue
        words = set(re.findall(r"\b[a-z_][a-z0-9_]*\b", text))
        for module in sorted(modules - words):
            found.append(f"README.md Layout: {package}.{module} exists but is not listed")
        for word in sorted(words & everywhere - modules - set(package.split("."))):
            if f"{package}.{word}" not in packages and "_" in word:
                found.append(f"README.md Layout: lists {word} under {package}, where no such module is")
    return found


def _report(found: list[str]) -> str:
    return f"{len(found)} to fix:\n" + "\n".join(found)


def test_every_rule_reference_names_a_numbered_rule_of_its_module_or_the_module_it_names():
    found = dangling_rule_references()
    assert not found, _report(found)


def test_nothing_cites_a_document_outside_the_repository():
    found = outside_citations()
    assert not found, _report(found)


def test_the_readme_layout_lists_every_module_and_no_module_that_is_not_there():
    found = layout_mismatches()
    assert not found, _report(found)
