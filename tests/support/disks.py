"""Real bad disks for tests: a small tmpfs mounted for one test (full when filled, read-only when
remounted so), which needs the privilege to mount; without it the test is skipped. A file-size
bound (``RLIMIT_FSIZE``, ``ulimit -f``) in a child needs nothing."""

from __future__ import annotations

import os
import resource
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def mounted_tmpfs(mount: Path, size: str = "48k") -> Iterator[Path]:
    """A tmpfs of ``size`` at ``mount`` (made here), unmounted at the end; skips the test without
    the privilege to mount."""
    mount.mkdir(mode=0o700)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(mount)],
        capture_output=True, check=False,
    )  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip("a tmpfs cannot be mounted here (needs the privilege to mount)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def remount(mount: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(mount)], check=True)


def fill(mount: Path) -> None:
    """Write ``mount`` full: the next block any file asks for is refused (ENOSPC)."""
    descriptor = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(descriptor, b"\0" * 4096):
            pass
    except OSError:
        pass  # full
    finally:
        os.close(descriptor)


def file_size_bound(limit: int) -> Callable[[], None]:
    """A child's ``preexec_fn``: it may write no file past ``limit`` bytes (``ulimit -f``)."""
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
