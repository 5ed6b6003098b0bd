"""The ledger's lifecycle and vocabulary rules generated from core
(``shell.ledger.rules``), equivalent to main's hand-written ones, and an old ledger brought up to
date on open. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

_EDGE_WHEN = (
    '    when = f"NOT ({changed}) AND NOT (\\n       " + "\\n    OR ".join(allowed) + ")"\n',
    '    when = f"0 AND NOT (\\n       " + "\\n    OR ".join(allowed) + ")"\n',
)

GENERATED_RULES: list[Mutation] = [
    rule(
        "rules: a record and a delivery move only along core's edges (generated rule, as main's triggers did)",
        *_EDGE_WHEN,
        "test_every_pair_of_every_table_against_the_database",
        "test_every_pair_of_every_lifecycle_has_main_s_outcome",
    ),
    rule(
        "rules: sending -> pending is judged on the note the move writes, canceled -> pending on the one it had",
        "        notes_written_by_the_move=True,\n",
        "        notes_written_by_the_move=False,\n",
        "test_every_outbox_pair_with_every_note_has_main_s_outcome",
    ),
    rule(
        "rules: a vocabulary holds on insert (generated from core's enums)",
        '        triggers.update([_vocabulary_trigger(table, "INSERT", tuple(columns))])\n',
        "        pass\n",
        "test_every_vocabulary_refuses_exactly_what_core_does_not_name",
    ),
    rule(
        "rules: a vocabulary holds on update where no lifecycle rule judges the column (in the lifecycle's trigger)",
        '        when = f"({when})\\n OR {outside}"\n',
        '        when = f"({when})"\n',
        "test_every_value_of_every_vocabulary_has_main_s_outcome",
    ),
    rule(
        "rules: a vocabulary holds on update in a table no lifecycle rule judges (live_lane, losses)",
        "        if unjudged.get(table):\n",
        "        if False:\n",
        "test_the_checks_no_other_test_writes_against_still_refuse",
    ),
    rule(
        "rules: an old ledger's hand-written edge triggers are dropped as the generated ones replace them",
        '        connection.execute(f"DROP TRIGGER IF EXISTS {lifecycle.replaces}")\n',
        "        pass\n",
        "test_a_ledger_main_made_at_any_version_is_brought_up_to_date_on_open",
        "test_the_hand_written_edge_triggers_are_gone_from_a_new_ledger",
    ),
    rule(
        "rules: a generated rule whose text the file holds otherwise is written again on open",
        "        if held.get(name) != sql:\n",
        "        if name not in held:\n",
        "test_a_rule_changed_in_the_file_is_written_again_on_open",
    ),
    rule(
        'rules: a rule_ trigger core no longer generates is dropped on open',
        '        _drop(connection, name, held[name])\n',
        '        pass\n',
        'test_a_rule_changed_in_the_file_is_written_again_on_open',
    ),
    rule(
        "rules: the generated rules are brought up to date after the migrations, also for a ledger made today",
        "        rules.bring_up_to_date(transaction)  # core's edges and vocabularies, no migration's\n",
        "        pass\n",
        "test_a_ledger_main_made_at_any_version_is_brought_up_to_date_on_open",
        "test_no_vocabulary_is_a_check_any_longer",
    ),
]
