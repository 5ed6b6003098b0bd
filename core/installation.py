"""Where a child process finds the connector's code: the PYTHONPATH of a child that runs it on the
parent's interpreter. From a clone (any directory the interpreter does not search by itself) that
directory comes first, so the child runs the code its parent runs, whatever path it inherited. From
an installed package (the code in one of the interpreter's site directories) nothing is added: the
interpreter finds it there by itself, and a site directory named on PYTHONPATH would stand before
the standard library."""

from __future__ import annotations

from collections.abc import Collection

PATH_SEPARATOR = ":"  # Linux's


def child_python_path(code_root: str, site_directories: Collection[str], inherited: str = "") -> str:
    """``inherited`` (the child's own PYTHONPATH, if any) comes after the code's directory."""
    own = [] if code_root in site_directories else [code_root]
    return PATH_SEPARATOR.join([*own, *([inherited] if inherited else [])])
