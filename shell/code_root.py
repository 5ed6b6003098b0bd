"""The connector's own code as a child process runs it: on this interpreter (``sys.executable``),
with ``python_path()`` as its PYTHONPATH (``core.installation`` decides from where the code lies)."""

from __future__ import annotations

import site
import sysconfig
from pathlib import Path

from core.installation import child_python_path

CODE_ROOT = Path(__file__).resolve().parents[1]  # the directory that holds core/ and shell/


def site_directories() -> frozenset[str]:
    """The directories this interpreter searches for installed packages by itself."""
    found = [*site.getsitepackages(), site.getusersitepackages(),
             *(sysconfig.get_paths()[name] for name in ("purelib", "platlib"))]
    return frozenset(str(Path(path).resolve()) for path in found)


def python_path(inherited: str = "") -> str:
    return child_python_path(str(CODE_ROOT), site_directories(), inherited)
