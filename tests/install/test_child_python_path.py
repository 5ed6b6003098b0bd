"""Where a child of ours finds the connector's code (``core.installation``), with plain values, and
the path this checkout's children are given (``shell.code_root``)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from core.installation import child_python_path
from shell import code_root

REPOSITORY = Path(__file__).resolve().parents[2]
SITES = frozenset({"/venv/lib/python3.11/site-packages", "/usr/lib/python3/dist-packages"})
directories = st.text(st.characters(codec="ascii", exclude_characters=":\x00"), min_size=1).map(
    lambda text: "/" + text)


@given(directories, st.sampled_from(["", "/elsewhere", "/a:/b"]))
def test_a_clone_comes_first_whatever_the_child_inherited(clone: str, inherited: str) -> None:
    expected = [clone, *inherited.split(":")] if inherited else [clone]
    assert child_python_path(clone, SITES - {clone}, inherited).split(":") == expected


@given(st.sampled_from(sorted(SITES)), st.sampled_from(["", "/elsewhere"]))
def test_an_installed_package_adds_nothing_before_the_standard_library(site: str, inherited: str) -> None:
    assert child_python_path(site, SITES, inherited) == inherited


def test_this_checkouts_children_are_given_the_checkout() -> None:
    assert code_root.CODE_ROOT == REPOSITORY
    assert str(REPOSITORY) not in code_root.site_directories()
    assert code_root.python_path() == str(REPOSITORY)
    assert code_root.python_path("/elsewhere") == f"{REPOSITORY}:/elsewhere"
