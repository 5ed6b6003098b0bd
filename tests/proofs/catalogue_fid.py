"""Issue 24's fidelity half (parts 4, 5, 6, 8): the acknowledgement rule the worker is told, the
demo's paced reads, a lapsed token as an outage, and the notice in flight when its reason ends.
Same form as ``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

FID: list[Mutation] = [
    rule(
        "the worker is told to acknowledge only when acknowledge is true and guard_acknowledged false",
        'ACKNOWLEDGE_WHEN: tuple[tuple[str, bool], ...] = (("acknowledge", True), ("guard_acknowledged", False))',
        'ACKNOWLEDGE_WHEN: tuple[tuple[str, bool], ...] = (("guard_acknowledged", False),)',
        "test_a_worker_acknowledges_only_when_acknowledge_is_true_and_guard_acknowledged_false",
        "test_the_worker_acknowledges_as_its_prompt_says_and_no_more",
    ),
    rule(
        "the bundled worker acknowledges as its prompt says, never by a reading of its own",
        "        if acknowledgement_called_for(instruction):",
        '        if not instruction.get("guard_acknowledged"):',
        "test_the_worker_acknowledges_as_its_prompt_says_and_no_more",
    ),
    rule(
        "a demo read still answered 429 after the client's retries waits its Retry-After and asks again",
        "            while answer.status in THROTTLED:",
        "            while False:",
        "test_a_read_still_rate_limited_after_the_clients_retries_waits_each_retry_after_and_is_answered",
    ),
]
