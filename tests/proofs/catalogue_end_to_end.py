"""The end-to-end proofs: ``bin/connect run`` refusing bad input, and the rules of admission and
the start that only a whole run shows (each event's messages, across restarts). Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

END_TO_END: list[Mutation] = [
    rule(
        "run: a token acting as someone other than the agent is refused before the connector starts",
        "    if person.id != agent_id:\n",
        "    if False:\n",
        "test_a_token_acting_as_someone_else_is_refused_before_anything_starts",
    ),
    rule(
        "run: a token Basecamp refuses (401) is one line and exit 3",
        "    except AuthenticationFailed as error:\n",
        "    except ZeroDivisionError as error:\n",
        "test_a_token_basecamp_refuses_is_one_line_and_exit_3",
    ),
    rule(
        "run: an identity that cannot be checked is not assumed: one line and exit 6",
        '        raise UserError(f"{fix}: {consequence}", EXIT_CONFIG) from error\n    except BasecampError as error:\n',
        '        raise UserError(f"{fix}: {consequence}", EXIT_CONFIG) from error\n    except ZeroDivisionError as error:\n',
        "test_a_basecamp_that_cannot_be_asked_is_one_line_and_exit_6",
    ),
    rule(
        "admission: an assignment is a request (its worker acknowledges; a holding reply where no route)",
        "ASSIGNED = Rule(Trigger.assigned, operator_only=True, acknowledge=True)",
        "ASSIGNED = Rule(Trigger.assigned, operator_only=True)",
        "test_each_event_gets_exactly_its_messages_across_a_restart",
    ),
    rule(
        "admission: a subscription comment asks for nothing (no guard, no acknowledgement)",
        "        acknowledge=rule.acknowledge,\n",
        "        acknowledge=rule.acknowledge or rule.trigger is Trigger.subscribed,\n",
        "test_each_event_gets_exactly_its_messages_across_a_restart",
        also=(
            (
                "REQUESTS = frozenset({Trigger.mentioned, Trigger.assigned})",
                "REQUESTS = frozenset({Trigger.mentioned, Trigger.assigned, Trigger.subscribed})",
            ),
        ),
    ),
    rule(
        "admission: a request where there is no route is blocked(no_route), kept for its holding reply",
        "    if not routed and rule.requires_route:\n",
        "    if not routed:\n",
        "test_each_event_gets_exactly_its_messages_across_a_restart",
    ),
    rule(
        "start: every record intake left seen re-runs admission (killed mid-read, answered once)",
        "                self._admit(event_id)\n            self.heartbeats.starting(\"feed\")",
        "                pass\n            self.heartbeats.starting(\"feed\")",
        "test_each_event_gets_exactly_its_messages_across_a_restart",
    ),
    rule(
        "run --shadow keeps its own lock, ledger and position: it runs beside the connector",
        "    directory = paths.directory / SHADOW_DIRECTORY if args.shadow else paths.directory\n",
        "    directory = paths.directory\n",
        "test_a_shadow_runs_beside_the_connector_on_its_own_state_and_posts_nothing",
    ),
    rule(
        "a full pacing window is not a rate limit: the outbox still claims",
        "        return self._pacer.held_for()\n",
        "        with self._pacer._lock:\n            return self._pacer._wait(self._clock.monotonic())\n",
        "test_a_full_rate_window_is_not_a_429_the_outbox_still_claims",
    ),
    rule(
        "intake records the performer the feed names",
        "event.performed_by_id, created_at, now, now",
        "None, created_at, now, now",
        "test_the_performer_the_feed_names_is_recorded_for_the_gate",
    ),
    rule(
        "admission's gate sees the recorded performer: delegated and agent-performed events are discarded",
        "        performed_by_id=None if performer is None else int(performer),",
        "        performed_by_id=None,",
        "test_a_mention_another_performed_for_its_creator_is_delegated_and_one_the_agent_performed_is_its_own",
    ),
]
