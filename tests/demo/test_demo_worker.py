"""shell.demo.worker: its part is chosen per event from the demo's scene file, not by one switch."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from shell.demo.worker import scene_part

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
