"""The ledger's moves ask core.edges from the row's real state, never from a
literal; the kind table is complete; a token file is read whole or refused. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

DECIDE: list[Mutation] = [
    rule(
        "marking an attempt running asks core.edges from the state it read, so a second is refused",
        "    running = asked(ATTEMPT_EDGES, AttemptState(found[0]), AttemptState.running, Actor.dispatcher)\n",
        "    running = asked(ATTEMPT_EDGES, AttemptState.launching, AttemptState.running, Actor.dispatcher)\n",
        "test_mark_running_records_the_process_once",
    ),
]

KINDS: list[Mutation] = [
    rule(
        "kinds: a kind without a row in the kind table is an error at import, never at run time",
        '    raise ImportError(f"message kinds without a row in KINDS: {sorted(_missing)}")\n',
        "    pass\n",
        "test_a_kind_without_a_row_fails_at_import",
    ),
]

TOKEN_FILE: list[Mutation] = [
    rule(
        "a token file over 64 KiB is refused whole, never read cut as a token",
        "    if len(raw) > MAX_TOKEN_FILE_BYTES:  # cut, it would be read as a token it is not\n",
        "    if False:\n",
        "test_a_token_file_over_the_bound_is_refused_whole_never_read_cut",
    ),
]
