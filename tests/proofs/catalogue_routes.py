"""The proofs of routes that reload: what a re-read configuration file
authorizes (``core.configuration``), admission while it authorizes nothing, the running
connector applying it, and the commands that no longer ask for a restart. Same form as
``tests.proofs.catalogue``."""

from __future__ import annotations

from tests.proofs.mutation import Mutation, rule

ROUTES: list[Mutation] = [
    rule(
        "a re-read file naming another account or agent authorizes nothing",
        "    if (now.account_id, now.agent_id) != (running.account_id, running.agent_id):\n",
        "    if False:\n",
        "test_a_file_naming_another_agent_or_account_authorizes_nothing",
    ),
    rule(
        "a re-read file that does not validate authorizes nothing",
        "    if not isinstance(parsed, Configuration):\n        problems = parsed\n",
        "    if False:\n        problems = parsed\n",
        "test_a_file_that_does_not_validate_authorizes_nothing",
    ),
    rule(
        "an unusable configuration file is logged once, not at every re-read",
        "        if before.usable or before.problem != after.problem:\n",
        "        if True:\n",
        "test_an_unusable_file_is_logged_once_and_its_return_once",
    ),
    rule(
        "while the configuration file is unusable a request is blocked config_unreadable",
        "    if not settings.configuration_usable:\n        return _blocked(BlockedReason.config_unreadable)\n",
        "",
        "test_while_the_file_is_unusable_a_request_is_blocked_config_unreadable_not_no_route",
    ),
    rule(
        "while the configuration file is unusable the gate discards nothing for a missing route",
        "    if not routed and settings.configuration_usable:\n",
        "    if not routed:\n",
        "test_while_the_file_is_unusable_the_gate_discards_nothing_for_a_missing_route",
    ),
    rule(
        "the running connector re-reads its configuration",
        "            loops.append(threading.Thread(target=self._config_loop, name=\"config\", daemon=True))\n",
        "            pass\n",
        "test_a_route_added_by_setup_while_the_connector_runs_is_served_within_3_s",
    ),
    rule(
        "a re-read applies its routes to admission and the dispatcher",
        "        self.dispatcher.routes = _directories(authorized)\n",
        "        pass\n",
        "test_a_route_added_by_setup_while_the_connector_runs_is_served_within_3_s",
    ),
    rule(
        "records blocked config_unreadable are admitted again as soon as the file is usable",
        "        if after.usable and not before.usable:\n            self.readmit_unreadable()\n",
        "",
        "test_a_route_added_by_setup_while_the_connector_runs_is_served_within_3_s",
    ),
    rule(
        "status shows why the running connector's configuration authorizes nothing",
        "        self.note(after.problem)\n",
        "",
        "test_a_route_added_by_setup_while_the_connector_runs_is_served_within_3_s",
    ),
    rule(
        "setup beside a running connector says its routes are served without a restart",
        "    return holder is not None and holder.pid_present is not False\n",
        "    return False\n",
        "test_setup_beside_a_running_connector_says_the_routes_are_served_without_a_restart",
    ),
    rule(
        "a re-read file routing a project over the connector's own paths authorizes nothing",
        '            return Authorization(usable=False, problem=f"the configuration file is refused: {reach}")',
        "            pass",
        "test_a_reread_file_whose_route_reaches_the_connector_authorizes_nothing",
        "test_the_running_connectors_reread_refuses_a_route_edited_over_the_connector",
    ),
    rule(
        "the running connector's re-read judges its routes against the connector's paths",
        "    return unreaching(authorization, [route_facts(route.project_id, route.directory, own)\n",
        "    return unreaching(authorization, [route_facts(route.project_id, route.directory, ())\n",
        "test_the_running_connectors_reread_refuses_a_route_edited_over_the_connector",
    ),
]
