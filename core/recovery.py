"""Recovery's decision tree: what a start does next with one attempt a previous connector left
live, from what it has found so far (``shell.dispatcher`` asks after each step).

Rules:
1. A stop set before anything is done to an attempt leaves it, and every later one, live as it
   was, for the next start.
2. An attempt with no recorded process is marked left for a person (``settle-launch``); its
   group is never ended, nor the attempt settled, here.
3. A recorded group is ended only while its leader is provably the one recorded; one that cannot
   be verified stays live and held, and nothing is settled around it.
4. A gone group's attempt is settled ``lost`` after the replies the adopted-reply rule reads are
   listed, unless a stop came meanwhile (the listing may be short): it then waits for the next
   start, which costs nothing, where settling now could call a reply "not known"."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class RecoveryStep(StrEnum):
    leave_live = "leave_live"  # rules 1 and 4: this attempt and every later one stay live
    mark_left = "mark_left"  # rule 2: left mid-launch, for a person
    end_group = "end_group"  # rule 3: end the recorded group, verified
    held = "held"  # rule 3: the group cannot be verified; the attempt stays live and held
    list_replies = "list_replies"  # rule 4: what the settlement's adopted-reply rule reads
    settle_lost = "settle_lost"  # rule 4: the attempt ends lost, settled


@dataclass(frozen=True, slots=True)
class RecoveryFacts:
    """What recovery knows of one attempt so far."""

    recorded_process: bool  # its pid and process group are recorded
    stopped: bool  # the start's stop is set, as read just now
    group_gone: bool | None = None  # None: not ended yet; False: it cannot be verified as ours
    listed: bool = False  # its replies are listed


def recovery_step(facts: RecoveryFacts) -> RecoveryStep:
    """The next step for the attempt ``facts`` describe (the rules above)."""
    if facts.group_gone is None and facts.stopped:  # nothing is done to it yet (rule 1)
        return RecoveryStep.leave_live
    if not facts.recorded_process:
        return RecoveryStep.mark_left
    if facts.group_gone is None:
        return RecoveryStep.end_group
    if not facts.group_gone:
        return RecoveryStep.held
    if not facts.listed:
        return RecoveryStep.list_replies
    if facts.stopped:  # its listing may have been cut short (rule 4)
        return RecoveryStep.leave_live
    return RecoveryStep.settle_lost
