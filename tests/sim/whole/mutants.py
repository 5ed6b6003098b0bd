"""``bin/simulate --mutants``: each injected bug, applied in a temporary copy, must be found.

Rules:
1. A mutant is a catalogued rule of ``tests/proofs`` (its find/replace, by the rule's name), or
   one of this module's own (``OWN``), written the same way (``tests.proofs.mutation.rule``).
   Its text must occur exactly once in core/ and shell/ (``tests.proofs.anchors.SourceTree``).
   Left out on purpose: rules of parts the simulation replaces (the HTTP client's one request,
   ending a real process group),
   rules no interleaving can reach (a flush's own claimed set: nothing returns to pending within
   one flush), rules of the edge table the checks themselves read, and orderings whose effects
   are the same end state (the start's reconcile before its send).
2. Each is applied in a copy made by ``tests.proofs.runner.make_copy`` (the checkout is never
   written), where ``bin/simulate --stop-at-first`` runs seeds 0.. up to the budget; the seeds it
   took are reported. A mutant not found within the budget fails the run.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.proofs.anchors import SourceTree, mutated
from tests.proofs.catalogue import MUTATIONS
from tests.proofs.mutation import Mutation, rule
from tests.proofs.runner import REPOSITORY, make_copy, remove_abandoned_copies

CATALOGUED = (
    "invariant 9: a guard is reported fired from its claim, in the claim's transaction",
    "invariant 5: a worker's own message is never adopted",
    "adoption: exactly one candidate, never the first of several",
    "adoption: a receipt another intent owns is not a candidate",
    "adoption: a candidate's words must equal the body's",
    "a refusal cancels with the refused note and is never listed",
    "claim: a guard a worker canceled by get_dispatch is canceled",
    "invariant 4 across a crash: a restart never posts a sending intent again (SIGKILL)",
    "an exposed, unreported instruction ends unknown: it never runs again automatically",
    "the hold pauses sending (before the database's trigger refuses it)",
    "the hold: get_dispatch serves no first exposure or first pull under it",
    "while a 429's wait runs nothing is claimed",
    "inbox lane: the connector reads it",
    "a request is capped at the flush's deadline",
    "adopted reply: an indeterminate intent's words hide its message, which may exist with no receipt",
    "the last word: a worker's word or the completion notice waits while an earlier word of its task has not landed",
    "not created: the time an intent sat due and unclaimed (an outage waited out) never counts toward the day",
    "a 401 is due again at once and never given up for a person",
    "not created: the outbox gives the bound the time each try sat due and unclaimed (a token outage waited out)",
    "admission: a record blocked by a 401 is retried without end, not for a day",
    "a guard whose claim fired a row is called for while its record stands, whatever the rows did since",
    "a fired guard canceled by Basecamp's refusal or a day's give-up marks its rows refused",
    "a fired guard a person abandons marks its rows abandoned",
    "shutdown: the connector's stop stops and settles its workers before the flush",
    "shutdown: the connector's stop sends what is due within its bound",
    "a guard is claimed only once its delay has passed, as every intent once due",
    "a task row joining after a person abandoned its event's guard says abandoned, never fired",
)

OWN = (
    rule(
        "skip recovery: the start never settles what a previous process left running",
        "    held = [] if parts.recovery is None else parts.recovery.recover(stop)",
        "    held = []",
    ),
    rule(
        "settle a live worker: recovery settles an attempt without ending its worker's group",
        "                    found = replace(found, group_gone=self._end_group(attempt))\n",
        "                    found = replace(found, group_gone=True)\n",
    ),
    rule(
        "a completion notice twice on restart: recovery settles attempts already ended",
        "FROM attempts WHERE state <> 'ended' ORDER BY launched_at",
        "FROM attempts ORDER BY launched_at",
    ),
    rule(
        "the hold: nothing launches under it (both code walls gone: the trigger alone refuses)",
        "    if not buckets or not may_launch(hold_marker.standing(connection)):\n",
        "    if not buckets:\n",
        also=(("    if not may_launch(hold_marker.standing(connection)):\n        raise NotStartable(",
               "    if False:\n        raise NotStartable("),),
    ),
    # the kinds an outside set of bugs showed the simulation blind to
    rule(
        "adoption: the newest of several matches adopted",
        "    if len(candidates) != 1:\n        return Indeterminate(notes.matching_messages(len(candidates)))\n",
        "    if not candidates:\n        return Indeterminate(notes.matching_messages(len(candidates)))\n",
        also=(("    (receipt_id,) = candidates\n    return Adopt(receipt_id)", "    receipt_id = max(candidates)\n    return Adopt(receipt_id)"),),
    ),
    rule(
        "reconciliation gives up at eleven failed listings, not ten",
        "    if failures >= MAX_RECONCILE_FAILURES:\n",
        "    if failures > MAX_RECONCILE_FAILURES:\n",
    ),
    rule(
        "the listing window shifted past the sending time",
        "    return (sending_at if sending_at is not None else created_at) - RECONCILE_SLACK",
        "    return (sending_at if sending_at is not None else created_at) + RECONCILE_SLACK",
    ),
    rule(
        "a rival lookup binding the bucket for the recording",
        "            [str(row.destination.kind), row.destination.recording_id],",
        "            [str(row.destination.kind), row.destination.bucket_id],",
    ),
    rule(
        "a subscribed comment arms the guard",
        "SUBSCRIBED = Rule(Trigger.subscribed, requires_route=True)",
        "SUBSCRIBED = Rule(Trigger.subscribed, requires_route=True, acknowledge=True)",
    ),
    rule(
        "the guard is due at its verdict, not its delay after",
        "IntentKind.guard_ack, record, (record.event_id,), (), decided_at + guard_delay,",
        "IntentKind.guard_ack, record, (record.event_id,), (), decided_at,",
    ),
    rule(
        "a 429's Retry-After shortens a longer backoff",
        "        wait = max(wait, timedelta(seconds=min(outcome.retry_after_seconds,",
        "        wait = min(wait, timedelta(seconds=min(outcome.retry_after_seconds,",
    ),
    rule(
        "a 429's Retry-After replaces the backoff",
        "        wait = max(wait, timedelta(seconds=min(outcome.retry_after_seconds,",
        "        wait = (timedelta(seconds=min(outcome.retry_after_seconds,",
    ),
    rule(
        "the completion notice goes before a worker's word still waiting its retry",
        "        completion_key, Where.reply, after_earlier_words, templates.completion),",
        "        completion_key, Where.reply, lambda facts: Claim(), templates.completion),",
    ),
    rule(
        "an unpulled prompt is withdrawn for a retry though its worker ran",
        "    if spawn_failed and launch_exposure and not row.pulled:\n",
        "    if launch_exposure and not row.pulled:\n",
    ),
)


def mutants() -> list[Mutation]:
    named = {mutation.rule: mutation for mutation in MUTATIONS}
    return [named[name] for name in CATALOGUED] + list(OWN)


def _apply(mutation: Mutation, copy: Path) -> None:
    tree = SourceTree(copy)
    places = [tree.locate(find, replace) for find, replace in mutation.changes]
    for relative, text in mutated({place.path: tree.text(place.path) for place in places}, places).items():
        (copy / relative).write_text(text, "utf-8")


def _hunt(mutation: Mutation, seeds: int, steps: int) -> tuple[str, int | None, str]:
    copy = make_copy(REPOSITORY)
    try:
        _apply(mutation, copy)
        finished = subprocess.run(
            [sys.executable, "-m", "tests.sim.whole.main", "--seeds", str(seeds), "--steps", str(steps),
             "--stop-at-first"],
            cwd=copy, capture_output=True, text=True, timeout=3600, check=False,
        )
        found = re.search(r"^VIOLATION seed (\d+) step \d+: (.*)$", finished.stdout, re.MULTILINE)
        if found:
            return mutation.rule, int(found.group(1)) + 1, found.group(2)[:110]
        crashed = finished.returncode != 0 and "simulate: seeds=" not in finished.stdout
        detail = (finished.stderr.strip().splitlines() or ["?"])[-1][:110] if crashed else ""
        return mutation.rule, (1 if crashed else None), ("the run broke: " + detail) if crashed else ""
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def run_mutants(seeds: int, steps: int, jobs: int, only: str = "") -> int:
    remove_abandoned_copies()
    chosen = [mutation for mutation in mutants() if only in mutation.rule]
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda mutation: _hunt(mutation, seeds, steps), chosen))
    missed = 0
    for name, needed, how in results:
        if needed is None:
            missed += 1
            print(f"  NOT FOUND in {seeds} seeds  {name}")
        else:
            print(f"  found in {needed:4d} seeds  {name}\n      {how}")
    slowest = max((needed for _, needed, _ in results if needed is not None), default=0)
    print(f"mutants: {len(results) - missed} of {len(results)} found; the slowest took {slowest} seeds")
    print(f"simulate: mutants={len(results)} missed={missed}")
    return 1 if missed else 0
