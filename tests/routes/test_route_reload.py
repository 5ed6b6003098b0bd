"""core.configuration: what a re-read configuration file authorizes, and what is logged of it;
and admission while it authorizes nothing (core.admission)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from core.admission import (
    AdmissionSettings,
    Author,
    BlockedReason,
    Continue,
    EventPointer,
    RecordingStatus,
    RecordingSummary,
    decide,
    gate,
)
from core.configuration import (
    Authorization,
    Configuration,
    Route,
    at_start,
    authorize,
    news,
    parse_configuration,
    to_mapping,
)
from core.edges import RecordState

RUNNING = Configuration(
    account_id=999, base_url="https://3.basecampapi.com", agent_id=42, token_file="/home/a/token",
    routes=(Route(10, "/srv/ten"),),
)  # fmt: skip


def file_with(**changes: Any) -> dict[str, Any]:
    return {**to_mapping(RUNNING), **changes}


def test_a_route_added_to_the_file_is_authorized() -> None:
    added = file_with(routes={"10": {"directory": "/srv/ten"}, "20": {"directory": "/srv/twenty"}})
    authorized = authorize(RUNNING, added)
    assert authorized.usable
    assert authorized.routed_projects == {10, 20}
    assert authorized.pending == ""


def test_a_route_removed_from_the_file_is_no_longer_authorized() -> None:
    assert authorize(RUNNING, file_with(routes={})).routed_projects == frozenset()


def test_a_file_that_cannot_be_read_authorizes_nothing() -> None:
    authorized = authorize(RUNNING, "cannot read /s/config.json: Permission denied")
    assert (authorized.usable, authorized.routes) == (False, ())
    assert authorized.problem == "the configuration file cannot be read: cannot read /s/config.json: Permission denied"


def test_a_file_that_does_not_validate_authorizes_nothing() -> None:
    authorized = authorize(RUNNING, file_with(concurrency=0, routes={"x": {}}))
    assert (authorized.usable, authorized.routes) == (False, ())
    assert authorized.problem.startswith("the configuration file is invalid: ")
    assert authorized.problem.endswith("more)")


def test_a_file_naming_another_agent_or_account_authorizes_nothing() -> None:
    for other in (file_with(agent_id=43), file_with(account_id=1000)):
        authorized = authorize(RUNNING, other)
        assert (authorized.usable, authorized.routes) == (False, ())
        assert "not this connector's account 999 and agent 42" in authorized.problem


def test_a_change_besides_the_routes_waits_for_a_restart_and_says_so() -> None:
    authorized = authorize(RUNNING, file_with(concurrency=5))
    assert authorized.usable
    assert authorized.routes == RUNNING.routes
    assert authorized.pending == "a change besides the routes takes effect at the next start"


@given(st.sets(st.integers(1, 10**9), max_size=5))
def test_a_usable_file_authorizes_exactly_its_routes(projects: set[int]) -> None:
    routes = {str(project): {"directory": f"/srv/{project}"} for project in projects}
    mapping = file_with(routes=routes)
    parsed = parse_configuration(mapping)
    assert isinstance(parsed, Configuration)
    assert authorize(RUNNING, mapping).routes == parsed.routes


def test_an_unusable_file_is_logged_once_and_its_return_once() -> None:
    start = at_start(RUNNING)
    broken = authorize(RUNNING, "gone")
    assert news(start, broken) == (f"{broken.problem}: it authorizes nothing until it is usable again",)
    assert news(broken, authorize(RUNNING, "gone")) == (), "not again every 2 s"
    other = authorize(RUNNING, file_with(agent_id=43))
    assert len(news(broken, other)) == 1, "a new reason is logged"
    back = authorize(RUNNING, to_mapping(RUNNING))
    assert news(other, back) == (
        "the configuration file is usable again", "routes reloaded: serving projects 10"
    )
    assert news(back, authorize(RUNNING, to_mapping(RUNNING))) == ()


# -- admission while the file authorizes nothing --------------------------------------------------

UNUSABLE = AdmissionSettings(agent_id=42, operator_id=7, configuration_usable=False)
MENTION = EventPointer(
    id=1, event_type="comment.created", bucket_id=10, creator_id=7, performed_by_id=None,
    actor_type="person", recording_id=5,
)  # fmt: skip
SUMMARY = RecordingSummary(
    status=RecordingStatus.active, type="Comment", creator=Author(7, "User"), parent_id=3,
    parent_type="Kanban::Card", campfire_id=None, mentioned_person_ids=frozenset({42}),
    app_url="https://3.basecamp.com/1/x", title="t", content="<div>x</div>", updated_at="2026-11-29T11:59:00Z",
)  # fmt: skip


def test_while_the_file_is_unusable_a_request_is_blocked_config_unreadable_not_no_route() -> None:
    verdict = decide(MENTION, UNUSABLE, SUMMARY)
    assert (verdict.state, verdict.reason) == (RecordState.blocked, BlockedReason.config_unreadable)


def test_while_the_file_is_unusable_the_gate_discards_nothing_for_a_missing_route() -> None:
    completion = EventPointer(
        id=2, event_type="todo.completed", bucket_id=10, creator_id=7, performed_by_id=None,
        actor_type="person", recording_id=5,
    )  # fmt: skip
    assert isinstance(gate(completion, UNUSABLE), Continue)


def test_the_settings_follow_the_authorization() -> None:
    from shell.state.config import routed_settings  # the shell's one mapping of it

    settings = routed_settings(UNUSABLE, Authorization(usable=True, routes=(Route(10, "/a", "", True),)))
    assert (settings.routed_projects, settings.watched_projects, settings.configuration_usable) == (
        {10}, {10}, True
    )


def test_the_file_is_re_read_every_2_s_as_the_reference_does() -> None:
    from datetime import timedelta

    from core.configuration import RELOAD_EVERY

    assert timedelta(seconds=2) == RELOAD_EVERY  # connectRoutesTTL
