"""A worked example: adding a message kind touches at most two production files.

In a copy of the tree (``tests.proofs.runner``'s way: git's tracked and untracked files, the
``.venv`` linked), a new kind -- a notice that a request is queued -- is added by editing its
``IntentKind`` member, its row in ``core.message_kinds`` (key, destination, urgency, claim rule,
claim snapshot, template, label) and the transition that calls for it (the verdict's, in the same
module). Nothing else: the outbox's routing, its urgency order (the ledger's claim index is
generated from the table), the narrator's label and the ledger's vocabulary of kinds are lookups
of the table or of ``IntentKind``. The copy then runs
the kind table's completeness test and one real flow: the intent written by the verdict, claimed,
posted once to the stand-in Basecamp, and its receipt recorded.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.proofs.runner import tree_files

REPOSITORY = Path(__file__).resolve().parents[2]
MOST_PRODUCTION_FILES = 2

EDITS: dict[str, tuple[tuple[str, str], ...]] = {
    "core/intent_kinds.py": (
        ('    completion = "completion"\n', '    completion = "completion"\n    queued_notice = "queued_notice"\n'),
    ),
    "core/message_kinds.py": (
        (
            "KINDS: dict[IntentKind, KindSpec] = {\n",
            '''def queued_notice_key(event_id: int) -> str:
    return f"queued_notice:event:{event_id}"


def queued_notice_claim(facts: ClaimFacts) -> ClaimDecision:
    if facts.record is None or facts.record.state != RecordState.queued:
        return Cancel(notes.NO_LONGER_CALLED_FOR)
    return Claim()


def queued_notice(event_id: int) -> templates.Lines:
    return (f"Queued: event {event_id} waits for a worker.", "", f"Event {event_id} · {templates.SIGNATURE}")


KINDS: dict[IntentKind, KindSpec] = {
    IntentKind.queued_notice: KindSpec("queued notice", 1, ClaimNeeds.event,
        queued_notice_key, Where.reply, queued_notice_claim, queued_notice),
''',
        ),
        (
            "        return () if guard is None else (guard,)\n",
            """        queued = None if record.state != RecordState.queued else _intent(
            IntentKind.queued_notice, record, (record.event_id,), (record.event_id,), decided_at,
            event_id=record.event_id,
        )
        return tuple(intent for intent in (guard, queued) if intent is not None)
""",
        ),
    ),
}

FLOW = '''"""The new kind's one real flow, in the copy."""

from core.intent_kinds import IntentKind
from shell.outbox import Outbox, SendResult
from tests.support.fake_basecamp import FakeBasecamp
from tests.support.ids import nth_intent
from tests.support.ledger_world import LedgerWorld, comment_on


def test_the_new_kind_is_written_claimed_posted_once_and_receipted(
    world: LedgerWorld, outbox: Outbox, basecamp: FakeBasecamp
) -> None:
    world.seen(7)
    world.verdict(7, "queued")
    assert [row for row in world.outbox() if row[1] == IntentKind.queued_notice] == [
        (nth_intent(2), "queued_notice", "pending", "")
    ]
    assert outbox.flush().results == [SendResult.sent, SendResult.nothing_due]
    assert outbox.flush().results == [SendResult.nothing_due]
    (message,) = basecamp.messages_at(comment_on(7))
    assert message.text.startswith("Queued: event 7 waits for a worker.")
    assert basecamp.post_count() == 1
    assert [row for row in world.outbox() if row[1] == IntentKind.queued_notice] == [
        (nth_intent(2), "queued_notice", "sent", "")
    ]
    with world.ledger.read() as connection:
        receipt = connection.execute("SELECT receipt_id FROM outbox WHERE kind = 'queued_notice'").fetchone()
    assert receipt == (message.id,)
'''
FLOW_TEST = "tests/outbox/test_the_added_kind_flow.py"


def production(path: str) -> bool:
    return not path.startswith("tests/")


def copy_tree(into: Path) -> None:
    for name in tree_files(REPOSITORY):
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPOSITORY / name, target)
    (into / ".venv").symlink_to(REPOSITORY / ".venv")


def add_the_kind(copy: Path) -> set[str]:
    """Apply ``EDITS`` and write the flow test in ``copy``; the files edited."""
    for path, changes in EDITS.items():
        text = (copy / path).read_text("utf-8")
        for find, replace in changes:
            assert text.count(find) == 1, f"{path}: the edit's anchor {find!r} is not one place"
            text = text.replace(find, replace)
        (copy / path).write_text(text, "utf-8")
    (copy / FLOW_TEST).write_text(FLOW, "utf-8")
    return {*EDITS, FLOW_TEST}


@pytest.mark.slow
def test_adding_a_kind_touches_at_most_two_production_files_and_works(tmp_path: Path) -> None:
    copy = tmp_path / "tree"
    copy_tree(copy)
    edited = add_the_kind(copy)
    assert len({path for path in edited if production(path)}) <= MOST_PRODUCTION_FILES
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/outbox/test_message_kinds.py", FLOW_TEST],
        cwd=copy, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
