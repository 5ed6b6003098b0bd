"""shell.demo.worker: its part is chosen per event from the demo's scene file, not by one switch."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from core.destinations import Destination, MessageKind
from core.posting import Created
from shell.demo.worker import scene_part, work

PROMPT = (
    "You are a worker started by the Basecamp agent connector.\n"
    "Task 3. Event 7000000007: mentioned on the recording get_dispatch names.\n"
    "1. Call get_dispatch with event_id 7000000007."
)


def test_the_part_is_the_scene_files_for_the_event_the_prompt_names(tmp_path: Path) -> None:
    scenes = tmp_path / "scenes.json"
    scenes.write_text(json.dumps({"7000000001": "answer", "7000000007": "give_up"}))
    assert scene_part(PROMPT, scenes, wait_seconds=0) == "give_up"
    assert scene_part(PROMPT.replace("7000000007", "7000000001"), scenes, wait_seconds=0) == "answer"


def test_the_worker_waits_for_the_demo_to_write_its_part(tmp_path: Path) -> None:
    scenes = tmp_path / "scenes.json"
    scenes.write_text("{}")

    def write_later() -> None:
        time.sleep(0.3)
        scenes.write_text(json.dumps({"7000000007": "slow:7"}))

    writer = threading.Thread(target=write_later)
    writer.start()
    try:
        assert scene_part(PROMPT, scenes, wait_seconds=10) == "slow:7"
    finally:
        writer.join()


def test_no_part_in_time_or_no_event_in_the_prompt_plays_answer(tmp_path: Path) -> None:
    scenes = tmp_path / "scenes.json"
    scenes.write_text(json.dumps({"7000000001": "give_up"}))
    assert scene_part(PROMPT, scenes, wait_seconds=0.1) == "answer"
    assert scene_part("no event named here", scenes, wait_seconds=0.1) == "answer"
    assert scene_part(PROMPT, tmp_path / "absent.json", wait_seconds=0.1) == "answer"


class Tools:
    """The connector's dispatch tools, as a worker sees them: one instruction, then nothing."""

    def __init__(self, instruction: dict[str, object]) -> None:
        self.waiting = [instruction]
        self.calls: list[tuple[str, dict[str, object]]] = []

    def call(self, tool: str, **arguments: object) -> dict[str, object]:
        self.calls.append((tool, arguments))
        if tool == "get_dispatch":
            return {"instruction": self.waiting.pop() if self.waiting else None}
        return {}


class Basecamp:
    """Basecamp as the worker posts to it: every post lands, with the next id."""

    def __init__(self) -> None:
        self.posted: list[tuple[MessageKind, str]] = []

    def post(self, destination: Destination, text: str) -> Created:
        self.posted.append((destination.kind, text))
        return Created(100 + len(self.posted))


@pytest.mark.parametrize(
    ("acknowledge", "guard_acknowledged", "boosted"),
    [(True, False, True), (True, True, False), (False, False, False), (False, True, False)],
)
def test_the_worker_acknowledges_as_its_prompt_says_and_no_more(
    acknowledge: bool, guard_acknowledged: bool, boosted: bool
) -> None:
    """The bundled worker reads the prompt's rule (core.dispatch_prompt), so a
    subscribed or completed trigger (``acknowledge`` false) gets no boost from it either."""
    instruction = {
        "event_id": 7000000007, "acknowledge": acknowledge, "guard_acknowledged": guard_acknowledged,
        "recording": {"bucket_id": 1, "recording_id": 2}, "reply_to": {"kind": "comment", "recording_id": 2},
    }  # fmt: skip
    tools, basecamp = Tools(instruction), Basecamp()
    assert work(tools, basecamp, "answer") == 0  # type: ignore[arg-type]
    acknowledgements = [arguments for tool, arguments in tools.calls if tool == "ack_dispatch"]
    assert acknowledgements == ([{"event_id": 7000000007, "text": "on it"}] if boosted else [])
    assert basecamp.posted == [], "the worker's words go to the tools, for the connector to post"
    (completed,) = [arguments for tool, arguments in tools.calls if tool == "complete_dispatch"]
    assert completed["reply"] == "Done with event 7000000007."
