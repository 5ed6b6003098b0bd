"""Prose a reader can trust: production cites nothing outside the repository. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

PROSE: list[Mutation] = [
    rule(
        "no production module cites a document outside the repository",
        "re-reads the file (``connectRoutesTTL``)",
        "re-reads the file (spec" " 2.2, ``connectRoutesTTL``)",
        "test_no_production_module_cites_a_document_outside_the_repository",
    ),
    rule(
        "a lifecycle table renders for a reader from its data: each edge's actors and what takes it",
        "            f\"{', '.join(sorted(edge.actors)):<22} {edge.taken_by}\"\n",
        "            f\"{', '.join(sorted(edge.actors)):<22}\"\n",
        "test_a_table_renders_for_a_reader_one_line_an_edge_with_its_actors_and_what_takes_it",
    ),
    rule(
        "the ledger package's table-writer map is the one the write check holds",
        '    "gaps": "intake",  # what the feed itself skipped: a 410',
        '    "gaps": "records",  # what the feed itself skipped: a 410',
        "test_the_ledger_package_states_the_map",
    ),
]
