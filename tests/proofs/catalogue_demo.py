"""The demo's proofs (``bin/connect demo``): its verdict, its scenes, its worker, its stage and its
command. Same form as ``tests.proofs.catalogue``; a rule's fast tests come before its demo run."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

COMMAND = "tests/demo/test_demo_command.py"

DEMO: list[Mutation] = [
    rule(
        "the verdict counts a POST only when it created a message: a refused POST posted nothing",
        "    return 200 <= post.status < 300",
        "    return True",
        "test_a_refused_post_is_not_a_posted_message",
        "test_a_doubled_and_a_missing_message_fail_the_verdict_and_the_exit",
    ),
    rule(
        "a POST the stand-in created and held unanswered is a posted message",
        'CREATING_FAULTS = frozenset({"create_then_drop", "create_then_delay"})',
        "CREATING_FAULTS: frozenset[str] = frozenset()",
        "test_a_post_created_and_held_unanswered_is_a_posted_message",
        "test_the_demo_passes_from_nothing_and_its_verdict_is_the_standins_own_record",
    ),
    rule(
        "a POST's place is read in the demo's account only",
        "    if found is None or int(found.group(1)) != account_id:",
        "    if found is None:",
        "test_a_posts_place_is_read_from_its_path_in_the_demos_account",
    ),
    rule(
        "doubled: the same words posted twice at one place",
        "        if message in seen or (expectation is not None and expectation in met):",
        "        if expectation is not None and expectation in met:",
        "test_the_same_words_posted_twice_at_one_place_are_doubled",
    ),
    rule(
        "doubled: two messages where a scene calls for one (two acknowledgements of one request)",
        "        if message in seen or (expectation is not None and expectation in met):",
        "        if message in seen:",
        "test_two_acknowledgements_of_one_request_in_different_words_are_doubled",
    ),
    rule(
        "missing: a message a scene calls for that never came",
        "    missing = tuple(wanted for wanted in expectations if wanted not in met)",
        "    missing: tuple[Expected, ...] = ()",
        "test_an_expectation_nothing_meets_is_missing",
        "test_a_doubled_and_a_missing_message_fail_the_verdict_and_the_exit",
    ),
    rule(
        "unexpected: a message no scene calls for",
        "            unexpected.append(message)",
        "            pass",
        "test_a_message_nobody_called_for_is_unexpected",
    ),
    rule(
        "the demo passes only with nothing doubled, missing or unexpected",
        "        return not (self.doubled or self.missing or self.unexpected)",
        "        return not (self.doubled or self.missing)",
        "test_a_message_nobody_called_for_is_unexpected",
    ),
    rule(
        "the slow worker waits past the guard delay, so the guard boost goes out",
        "SLOW_WORKER_MARGIN = timedelta(seconds=4)",
        "SLOW_WORKER_MARGIN = timedelta(seconds=-3)",
        "test_the_slow_worker_waits_past_the_guard_delay",
        "test_the_demo_passes_from_nothing_and_its_verdict_is_the_standins_own_record",
    ),
    rule(
        "a slow worker's scene calls for the guard's acknowledgement, in its words",
        "\"the guard's acknowledgement\", boost, templates.GUARD_ACKNOWLEDGEMENT)",
        "\"the guard's acknowledgement\", boost)",
        "test_a_slow_worker_calls_for_the_guards_acknowledgement_and_no_other",
    ),
    rule(
        "a scene is settled only when every notice of it is final",
        "        and all(intent.state in FINAL_INTENT_STATES for intent in view.intents)",
        "",
        "test_a_scene_is_settled_only_when_its_record_attempt_and_notices_have_stopped_moving",
    ),
    rule(
        "the narration tells a completed record after what the worker did",
        "    if moved and after.state not in AFTER_THE_WORKER:",
        "    if moved:",
        "test_a_worker_told_in_the_order_things_happen_to_it",
    ),
    rule(
        "an adopted notice is told as adopted, not posted",
        '        case "sent" if after.note == notes.ADOPTED:',
        '        case "sent" if False:',
        "test_an_adopted_notice_says_it_was_not_posted_again",
    ),
    rule(
        "the demo worker's part is chosen per event, from the scene file",
        "        if isinstance(part, str):\n            return part\n",
        "        if False:\n            return str(part)\n",
        "test_the_part_is_the_scene_files_for_the_event_the_prompt_names",
    ),
    rule(
        "the demo worker waits for the demo to write its part",
        "        if time.monotonic() >= deadline:\n            print(f\"demo worker: no part",
        "        if True:\n            print(f\"demo worker: no part",
        "test_the_worker_waits_for_the_demo_to_write_its_part",
    ),
    rule(
        "a worker that gives up reports failed, so the completion notice names the event",
        '            tools.call("complete_dispatch", event_id=event_id, outcome="failed")',
        '            tools.call("complete_dispatch", event_id=event_id, outcome="succeeded")',
        "test_the_demo_passes_from_nothing_and_its_verdict_is_the_standins_own_record",
    ),
    rule(
        "the demo's world must be the demo world",
        "    if len(projects) < 3 or not all(project.cards for project in projects[:3]):",
        "    if False:",
        "test_a_world_that_is_not_the_demo_world_is_refused_in_one_line",
    ),
    rule(
        "the demo routes two projects and leaves the third without a route",
        "ROUTED_PROJECTS = 2",
        "ROUTED_PROJECTS = 3",
        "test_setup_writes_routes_for_two_projects_and_a_worker_command_with_no_token",
    ),
    rule(
        "the demo's token file is owner-only",
        '        private_files.write_new_file(self.token_file, (token + "\\n").encode())',
        '        self.token_file.write_text(token + "\\n")',
        "test_the_stage_is_owner_only_and_the_token_file_too",
    ),
    rule(
        "the worker command names the token file, never the token",
        '            "--token-file", str(self.token_file), "--scenes", str(self.scene_file),',
        '            "--token-file", world.agent_token, "--scenes", str(self.scene_file),',
        "test_setup_writes_routes_for_two_projects_and_a_worker_command_with_no_token",
    ),
    rule(
        "scene 5 kills the connector with SIGKILL while the notice is in flight",
        "        self.connector.crash()\n",
        "",
        "test_the_demo_passes_from_nothing_and_its_verdict_is_the_standins_own_record",
    ),
    rule(
        "only the requests made after the demo began are judged",
        "        mark = len(link.requests())",
        "        mark = 0",
        "test_the_demo_passes_from_nothing_and_its_verdict_is_the_standins_own_record",
    ),
    rule(
        "the connector is stopped whatever happens to a scene",
        "        with contextlib.suppress(Exception):\n            connector.stop()\n",
        "        pass\n",
        "test_a_scene_that_breaks_still_stops_the_connector_and_keeps_the_directory",
    ),
    rule(
        "a failed demo keeps its directory for a person to read",
        "            outcome.kept = keep or not outcome.passed",
        "            outcome.kept = keep",
        "test_a_scene_that_breaks_still_stops_the_connector_and_keeps_the_directory",
    ),
    rule(
        "the exit code follows the verdict",
        "    return EXIT_OK if outcome.passed else EXIT_FAILURE",
        "    return EXIT_OK",
        "test_a_doubled_and_a_missing_message_fail_the_verdict_and_the_exit",
    ),
    rule(
        "--json prints one JSON object and no narration",
        "        if not args.json:\n            print(line, flush=True)",
        "        print(line, flush=True)",
        "test_a_doubled_and_a_missing_message_fail_the_verdict_and_the_exit",
    ),
    rule(
        "the demo quotes a notice line by line, so a command never runs into the next words",
        "    lines = f\"'{words}'\".split(\"\\n\")",
        "    lines = [f\"'{words}'\".replace(\"\\n\", \" \")]",
        "test_a_notice_is_quoted_line_by_line_so_a_command_never_runs_into_the_next_words",
    ),
]
