"""``shell.private_files``: the one owner-only policy (create owner-only; refuse what exists
loose, foreign or of the wrong kind; never tighten) and the test that it is the only home of file
modes, ``O_EXCL`` and ``fchmod``.
"""

from __future__ import annotations

import ast
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shell import private_files
from shell.private_files import Exposed, WrongKind
from shell.state.lock import acquire, lock_path
from tests.support.sources import sources

HOME = "shell/private_files.py"
PRIVATE_MODES = frozenset({0o600, 0o700})
PRIVATE_NAMES = frozenset({"O_EXCL", "fchmod", "chmod", "lchmod", "umask"})


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _is_privacy(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) is int and node.value in PRIVATE_MODES
    if isinstance(node, ast.Attribute):
        return node.attr in PRIVATE_NAMES
    return isinstance(node, ast.Name) and node.id in PRIVATE_NAMES


def _privacy_code(tree: ast.Module) -> list[int]:
    return [getattr(node, "lineno", 0) for node in ast.walk(tree) if _is_privacy(node)]


def test_only_shell_private_files_names_modes_exclusive_creation_or_chmod() -> None:
    found = {path: lines for path, tree in sources() if path != HOME and (lines := _privacy_code(tree))}
    assert found == {}, f"file privacy outside {HOME}: {found}"


def test_what_is_missing_is_created_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0)
    try:
        directory = tmp_path / "a" / "b"
        private_files.ensure_directory(directory, "directory")
        private_files.write_new_file(directory / "file", b"x")
    finally:
        os.umask(previous)
    assert mode_of(tmp_path / "a") == 0o700
    assert mode_of(directory) == 0o700
    assert mode_of(directory / "file") == 0o600
    with pytest.raises(FileExistsError):
        private_files.write_new_file(directory / "file", b"y")


def test_a_loose_directory_is_refused_never_tightened(tmp_path: Path) -> None:
    directory = tmp_path / "loose"
    directory.mkdir()
    directory.chmod(0o750)
    with pytest.raises(Exposed, match="open to others \\(mode 0750\\); make it owner-only: chmod 700"):
        private_files.ensure_directory(directory, "directory")
    assert mode_of(directory) == 0o750


def test_a_symlink_is_refused_for_a_directory_and_for_a_file(tmp_path: Path) -> None:
    real = tmp_path / "real"
    private_files.ensure_directory(real, "directory")
    private_files.write_new_file(real / "file", b"")
    (tmp_path / "link").symlink_to(real)
    (tmp_path / "file-link").symlink_to(real / "file")
    with pytest.raises(WrongKind, match="symlink"):
        private_files.check_directory(tmp_path / "link", "directory")
    with pytest.raises(WrongKind, match="symlink"):
        private_files.check_file(tmp_path / "file-link", "file")


def test_a_missing_path_is_the_callers_to_name(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        private_files.check_directory(tmp_path / "nowhere", "directory")
    with pytest.raises(FileNotFoundError):
        private_files.check_file(tmp_path / "nothing", "file")


def test_a_whole_file_write_replaces_the_target_owner_only(tmp_path: Path) -> None:
    target = tmp_path / "config.json"
    private_files.write_atomically(target, b"one")
    private_files.write_atomically(target, b"two")
    assert target.read_bytes() == b"two"
    assert mode_of(target) == 0o600
    assert sorted(path.name for path in tmp_path.iterdir()) == ["config.json"]


def test_a_loose_lock_file_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    state = tmp_path / "state"
    private_files.ensure_directory(state, "state directory")
    path = lock_path(state, 1, 2)
    path.touch()
    path.chmod(0o644)
    with pytest.raises(Exposed, match="lock file"):
        acquire(state, 1, 2, datetime(2026, 1, 1, tzinfo=UTC))
    assert mode_of(path) == 0o644


def test_the_lock_and_its_metadata_are_owner_only(tmp_path: Path) -> None:
    state = tmp_path / "state"
    private_files.ensure_directory(state, "state directory")
    with acquire(state, 1, 2, datetime(2026, 1, 1, tzinfo=UTC)) as lock:
        assert mode_of(lock.path) == 0o600
        assert mode_of(Path(f"{lock.path}.json")) == 0o600
