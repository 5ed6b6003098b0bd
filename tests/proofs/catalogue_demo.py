"""The demo's proofs (``bin/connect demo``): its verdict, its scenes, its worker, its stage and its
command. Same form as ``tests.proofs.catalogue``; a rule's fast tests come before its demo run."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

VERDICT = "tests/demo/test_demo_verdict.py"
SCENES = "tests/demo/test_demo_scenes.py"
NARRATION = "tests/demo/test_demo_narration.py"
WORKER = "tests/demo/test_demo_worker.py"
STAGE = "tests/demo/test_demo_stage.py"
COMMAND = "tests/demo/test_demo_command.py"
PASSES = f"{COMMAND}::test_the_demo_passes_from_nothing_and_its_verdict_is_the_standins_own_record"
FAILS = f"{COMMAND}::test_a_doubled_and_a_missing_message_fail_the_verdict_and_the_exit"
BREAKS = f"{COMMAND}::test_a_scene_that_breaks_still_stops_the_connector_and_keeps_the_directory"

DEMO: list[Mutation] = [
    rule(
        "the verdict counts a POST only when it created a message: a refused POST posted nothing",
        "core/demo_verdict.py",
        "    return 200 <= post.status < 300",
        "    return True",
        f"{VERDICT}::test_a_refused_post_is_not_a_posted_message",
        FAILS,
    ),
    rule(
        "a POST the stand-in created and held unanswered is a posted message",
        "core/demo_verdict.py",
        'CREATING_FAULTS = frozenset({"create_then_drop", "create_then_delay"})',
        "CREATING_FAULTS: frozenset[str] = frozenset()",
        f"{VERDICT}::test_a_post_created_and_held_unanswered_is_a_posted_message",
        PASSES,
    ),
    rule(
        "a POST's place is read in the demo's account only",
        "core/demo_verdict.py",
        "    if found is None or int(found.group(1)) != account_id:",
        "    if found is None:",
        f"{VERDICT}::test_a_posts_place_is_read_from_its_path_in_the_demos_account",
    ),
    rule(
        "doubled: the same words posted twice at one place",
        "core/demo_verdict.py",
        "        if message in seen or (expectation is not None and expectation in met):",
        "        if expectation is not None and expectation in met:",
        f"{VERDICT}::test_the_same_words_posted_twice_at_one_place_are_doubled",
    ),
    rule(
        "doubled: two messages where a scene calls for one (two acknowledgements of one request)",
        "core/demo_verdict.py",
        "        if message in seen or (expectation is not None and expectation in met):",
        "        if message in seen:",
        f"{VERDICT}::test_two_acknowledgements_of_one_request_in_different_words_are_doubled",
    ),
    rule(
        "missing: a message a scene calls for that never came",
        "core/demo_verdict.py",
        "    missing = tuple(wanted for wanted in expectations if wanted not in met)",
        "    missing: tuple[Expected, ...] = ()",
        f"{VERDICT}::test_an_expectation_nothing_meets_is_missing",
        FAILS,
    ),
    rule(
        "unexpected: a message no scene calls for",
        "core/demo_verdict.py",
        "            unexpected.append(message)",
        "            pass",
        f"{VERDICT}::test_a_message_nobody_called_for_is_unexpected",
    ),
    rule(
        "the demo passes only with nothing doubled, missing or unexpected",
        "core/demo_verdict.py",
        "        return not (self.doubled or self.missing or self.unexpected)",
        "        return not (self.doubled or self.missing)",
        f"{VERDICT}::test_a_message_nobody_called_for_is_unexpected",
    ),
    rule(
        "the slow worker waits past the guard delay, so the guard boost goes out",
        "core/demo_scenes.py",
        "SLOW_WORKER_MARGIN = timedelta(seconds=4)",
        "SLOW_WORKER_MARGIN = timedelta(seconds=-3)",
        f"{SCENES}::test_the_slow_worker_waits_past_the_guard_delay",
        PASSES,
    ),
    rule(
        "a slow worker's scene calls for the guard's acknowledgement, in its words",
        "core/demo_scenes.py",
        "                         (templates.GUARD_ACKNOWLEDGEMENT,)),",
        "                         ()),",
        f"{SCENES}::test_a_slow_worker_calls_for_the_guards_acknowledgement_and_no_other",
    ),
    rule(
        "a scene is settled only when every notice of it is final",
        "core/demo_narration.py",
        "        and all(intent.state in FINAL_INTENT_STATES for intent in view.intents)",
        "",
        f"{NARRATION}::test_a_scene_is_settled_only_when_its_record_attempt_and_notices_have_stopped_moving",
    ),
    rule(
        "the narration tells a completed record after what the worker did",
        "core/demo_narration.py",
        "    if moved and after.state not in AFTER_THE_WORKER:",
        "    if moved:",
        f"{NARRATION}::test_a_worker_told_in_the_order_things_happen_to_it",
    ),
    rule(
        "an adopted notice is told as adopted, not posted",
        "core/demo_narration.py",
        '        case "sent" if after.note == notes.ADOPTED:',
        '        case "sent" if False:',
        f"{NARRATION}::test_an_adopted_notice_says_it_was_not_posted_again",
    ),
    rule(
        "the demo worker's part is chosen per event, from the scene file",
        "shell/demo/worker.py",
        "        if isinstance(part, str):\n            return part\n",
        "        if False:\n            return str(part)\n",
        f"{WORKER}::test_the_part_is_the_scene_files_for_the_event_the_prompt_names",
    ),
    rule(
        "the demo worker waits for the demo to write its part",
        "shell/demo/worker.py",
        "        if time.monotonic() >= deadline:",
        "        if True:",
        f"{WORKER}::test_the_worker_waits_for_the_demo_to_write_its_part",
    ),
    rule(
        "a worker that gives up reports failed, so the completion notice names the event",
        "shell/demo/worker.py",
        '            tools.call("complete_dispatch", event_id=event_id, outcome="failed")',
        '            tools.call("complete_dispatch", event_id=event_id, outcome="succeeded")',
        PASSES,
    ),
    rule(
        "the demo's world must be the demo world",
        "shell/demo/stage.py",
        "    if len(projects) < 3 or not all(project.cards for project in projects[:3]):",
        "    if False:",
        f"{STAGE}::test_a_world_that_is_not_the_demo_world_is_refused_in_one_line",
    ),
    rule(
        "the demo routes two projects and leaves the third without a route",
        "shell/demo/stage.py",
        "ROUTED_PROJECTS = 2",
        "ROUTED_PROJECTS = 3",
        f"{STAGE}::test_setup_writes_routes_for_two_projects_and_a_worker_command_with_no_token",
    ),
    rule(
        "the demo's token file is owner-only",
        "shell/demo/stage.py",
        "os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)",
        "os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)",
        f"{STAGE}::test_the_stage_is_owner_only_and_the_token_file_too",
    ),
    rule(
        "the worker command names the token file, never the token",
        "shell/demo/stage.py",
        '            "--token-file", str(self.token_file), "--scenes", str(self.scene_file),',
        '            "--token-file", world.agent_token, "--scenes", str(self.scene_file),',
        f"{STAGE}::test_setup_writes_routes_for_two_projects_and_a_worker_command_with_no_token",
    ),
    rule(
        "scene 5 kills the connector with SIGKILL while the notice is in flight",
        "shell/demo/scenes.py",
        "        self.connector.kill()\n",
        "",
        PASSES,
    ),
    rule(
        "only the requests made after the demo began are judged",
        "shell/demo/runner.py",
        "        mark = len(link.requests())",
        "        mark = 0",
        PASSES,
    ),
    rule(
        "the connector is stopped whatever happens to a scene",
        "shell/demo/runner.py",
        "        with contextlib.suppress(Exception):\n            connector.stop()\n",
        "        pass\n",
        BREAKS,
    ),
    rule(
        "a failed demo keeps its directory for a person to read",
        "shell/demo/runner.py",
        "            outcome.kept = keep or not outcome.passed",
        "            outcome.kept = keep",
        BREAKS,
    ),
    rule(
        "the exit code follows the verdict",
        "shell/commands/demo.py",
        "    return EXIT_OK if outcome.passed else EXIT_FAILURE",
        "    return EXIT_OK",
        FAILS,
    ),
    rule(
        "--json prints one JSON object and no narration",
        "shell/commands/demo.py",
        "        if not args.json:\n            print(line, flush=True)",
        "        print(line, flush=True)",
        FAILS,
    ),
    rule(
        "the demo quotes a notice line by line, so a command never runs into the next words",
        "core/demo_narration.py",
        "    lines = f\"'{words}'\".split(\"\\n\")",
        "    lines = [f\"'{words}'\".replace(\"\\n\", \" \")]",
        "tests/demo/test_demo_narration.py::"
        "test_a_notice_is_quoted_line_by_line_so_a_command_never_runs_into_the_next_words",
    ),
]
