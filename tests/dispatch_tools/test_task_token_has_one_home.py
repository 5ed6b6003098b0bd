"""The task token's variable name and its hash are defined once, in ``core.task_token``: the
session config that sets the variable, the MCP server that reads it, the task that keeps the hash
and the worker's call matched by it all import them.
"""

from __future__ import annotations

import ast

from core.task_token import TASK_TOKEN_ENV, token_sha256
from tests.support.sources import sources

HOME = "core/task_token.py"


def test_the_variable_name_is_written_once() -> None:
    found = [
        (path, node.lineno)
        for path, tree in sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == TASK_TOKEN_ENV
    ]
    assert [path for path, _ in found] == [HOME], found


def test_the_hash_is_defined_once_and_nothing_else_in_the_ledger_hashes() -> None:
    definitions = [
        path
        for path, tree in sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "token_sha256"
    ]
    assert definitions == [HOME]
    hashing = [
        (path, node.lineno)
        for path, tree in sources()
        if path.startswith("shell/ledger/")
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id == "hashlib"
    ]
    assert hashing == []


def test_the_hash_is_sha256_hex_of_the_utf8_bytes() -> None:
    assert token_sha256("é") == "4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c"
    assert token_sha256("a-token") == "1f6076e3a47ba1ded08025ffe06e57af217c14f9407f33fba50f99b1c7019387"
