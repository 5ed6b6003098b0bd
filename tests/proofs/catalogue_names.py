"""Names that say one thing -- a stand-in ``oversize`` fault's size is
its own field, never its delay. Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

NAMES: list[Mutation] = [
    rule(
        "stand-in: an oversize fault has no delay (its body's size is its size_mib)",
        "        if self.action is FaultAction.oversize and self.delay:\n",
        "        if False:\n",
        "test_a_fault_out_of_bounds_is_a_400_that_adds_nothing",
    ),
    rule(
        "stand-in: only an oversize fault has a size_mib",
        "            if self.action is not FaultAction.oversize:\n",
        "            if False:\n",
        "test_a_fault_out_of_bounds_is_a_400_that_adds_nothing",
    ),
    rule(
        "stand-in: an oversize fault's size_mib is more than 0 MiB",
        "    if not math.isfinite(value) or not 0 < value <= MAX_OVERSIZE_MIB:\n",
        "    if not math.isfinite(value) or not value <= MAX_OVERSIZE_MIB:\n",
        "test_a_fault_out_of_bounds_is_a_400_that_adds_nothing",
    ),
]
