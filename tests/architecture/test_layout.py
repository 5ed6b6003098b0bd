"""The README's layout agrees with the tree: every module it names exists where it says, and
every module of core/ and shell/ is named (``tests.architecture.layout`` renders it)."""

from __future__ import annotations

from tests.architecture.layout import README, differences, written


def test_the_readme_layout_names_every_module_of_core_and_shell_where_it_lives_and_nothing_else():
    text = README.read_text()
    assert written(text), "README.md has no rendered layout (python -m tests.architecture.layout --write)"
    found = differences(text)
    assert not found, (
        "README.md's layout differs from the tree (redraw: python -m tests.architecture.layout --write):\n"
        + "\n".join(found)
    )
