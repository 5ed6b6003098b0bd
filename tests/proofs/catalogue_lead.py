"""The proofs of what a merge of several branches added. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import rule

LEAD = [
    rule(
        "seam: every error line is shown escaped, whatever text it carries (what a person typed too)",
        "    lines = [escaped(line) for line in message.split(_LINES)]\n",
        "    lines = message.split(_LINES)\n",
        "test_a_path_with_a_control_character_is_shown_escaped_on_one_line",
        "test_bin_outbox_resolve_answers_any_arguments_in_the_documented_set",
        "test_bad_usage_shows_what_was_typed_escaped_on_one_line",
    ),
]
