"""The contract: every kind of JSON the stand-in answers is valid under Basecamp's own
OpenAPI document (``contract/basecamp-openapi.json``, copied into the project with its licence).

Each answer is checked against the schema the document gives for that operation and status,
with ``$ref`` resolved in the document. The check is closed: an object may carry only the
properties its schema names, so the stand-in invents no field Basecamp's contract lacks.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from jsonschema import Draft202012Validator

from shell.basecamp.standin.faults import Fault, FaultAction
from shell.basecamp.standin.server import StandIn

if TYPE_CHECKING:
    from conftest import Answer, Client

OPENAPI = Path(__file__).resolve().parent / "contract" / "basecamp-openapi.json"


@cache
def document() -> dict[str, Any]:
    return json.loads(OPENAPI.read_text(encoding="utf-8"))


@cache
def closed_components() -> dict[str, Any]:
    """The document's components, every object schema closed to properties it names."""
    components = copy.deepcopy(document()["components"])

    def close(node: object) -> None:
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(components)
    return components


def response_schema(path: str, method: str, status: int) -> dict[str, Any]:
    operation = document()["paths"][path][method]
    return operation["responses"][str(status)]["content"]["application/json"]["schema"]


def check(answer: Answer, schema: dict[str, Any], status: int) -> None:
    assert answer.status == status, answer.body
    assert answer.headers["content-type"].startswith("application/json")
    validator = Draft202012Validator({**schema, "components": closed_components()})
    errors = sorted(validator.iter_errors(answer.json()), key=str)
    assert not errors, "\n".join(f"{list(error.absolute_path)}: {error.message}" for error in errors)


def check_operation(answer: Answer, path: str, method: str, status: int) -> None:
    check(answer, response_schema(path, method, status), status)


def component(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def test_the_openapi_document_is_where_the_tests_expect_it() -> None:
    assert document()["openapi"].startswith("3.1")


def test_the_profile_is_a_person(demo: StandIn, demo_client: Client) -> None:
    check_operation(demo_client.get("my/profile.json"), "/{accountId}/my/profile.json", "get", 200)


@pytest.mark.parametrize("form", ["flat", "legacy"])
def test_comments_created_listed_and_read(demo: StandIn, demo_client: Client, form: str) -> None:
    project = demo.world.projects[0]
    prefix = "" if form == "flat" else f"buckets/{project.id}/"
    comments = f"{prefix}recordings/{project.recording_ids[0]}/comments.json"
    created = demo_client.post(comments, {"content": "<div>Hello <em>there</em></div>"})
    check_operation(created, "/{accountId}/recordings/{recordingId}/comments.json", "post", 201)
    demo.seed_message("comment", project.recording_ids[0], demo.world.people[0].id, "someone else's")
    check_operation(
        demo_client.get(comments), "/{accountId}/recordings/{recordingId}/comments.json", "get", 200
    )
    read = demo_client.get(f"{prefix}comments/{created.json()['id']}.json")
    check_operation(read, "/{accountId}/comments/{commentId}", "get", 200)


@pytest.mark.parametrize("form", ["flat", "legacy"])
def test_boosts_created_listed_and_read(demo: StandIn, demo_client: Client, form: str) -> None:
    project = demo.world.projects[1]
    prefix = "" if form == "flat" else f"buckets/{project.id}/"
    boosts = f"{prefix}recordings/{project.recording_ids[0]}/boosts.json"
    created = demo_client.post(boosts, {"content": "Way to go! 🚀"})
    check_operation(created, "/{accountId}/recordings/{recordingId}/boosts.json", "post", 201)
    check_operation(demo_client.get(boosts), "/{accountId}/recordings/{recordingId}/boosts.json", "get", 200)
    read = demo_client.get(f"{prefix}boosts/{created.json()['id']}.json")
    check_operation(read, "/{accountId}/boosts/{boostId}", "get", 200)


@pytest.mark.parametrize("form", ["flat", "legacy"])
def test_campfire_lines_created_listed_and_read(demo: StandIn, demo_client: Client, form: str) -> None:
    project = demo.world.projects[0]
    prefix = "" if form == "flat" else f"buckets/{project.id}/"
    lines = f"{prefix}chats/{project.campfire_id}/lines.json"
    created = demo_client.post(lines, {"content": "Good morning"})
    check_operation(created, "/{accountId}/chats/{campfireId}/lines.json", "post", 201)
    rich = demo_client.post(lines, {"content": "<strong>Hi</strong>", "content_type": "text/html"})
    check_operation(rich, "/{accountId}/chats/{campfireId}/lines.json", "post", 201)
    check_operation(demo_client.get(lines), "/{accountId}/chats/{campfireId}/lines.json", "get", 200)
    read = demo_client.get(f"{prefix}chats/{project.campfire_id}/lines/{created.json()['id']}.json")
    check_operation(read, "/{accountId}/chats/{campfireId}/lines/{lineId}", "get", 200)


def test_campfires_listed_and_read(demo: StandIn, demo_client: Client) -> None:
    check_operation(demo_client.get("chats.json"), "/{accountId}/chats.json", "get", 200)
    campfire = demo_client.get(f"chats/{demo.world.projects[0].campfire_id}.json")
    check_operation(campfire, "/{accountId}/chats/{campfireId}", "get", 200)


def test_error_bodies(demo: StandIn, demo_client: Client, connect: type[Client]) -> None:
    project = demo.world.projects[0]
    comments = f"recordings/{project.recording_ids[0]}/comments.json"
    create_comment = "/{accountId}/recordings/{recordingId}/comments.json"
    unauthorized = connect(demo, "not-a-token").post(comments, {"content": "x"})
    check_operation(unauthorized, create_comment, "post", 401)
    check_operation(demo_client.post(comments, {"content": " "}), create_comment, "post", 422)
    long_boost = demo_client.post(f"recordings/{project.recording_ids[0]}/boosts.json", {"content": "x" * 17})
    check_operation(long_boost, "/{accountId}/recordings/{recordingId}/boosts.json", "post", 422)
    blank_line = demo_client.post(f"chats/{project.campfire_id}/lines.json", {"content": ""})
    check_operation(blank_line, "/{accountId}/chats/{campfireId}/lines.json", "post", 422)
    check_operation(demo_client.get("comments/1.json"), "/{accountId}/comments/{commentId}", "get", 404)
    check_operation(demo_client.get("boosts/1.json"), "/{accountId}/boosts/{boostId}", "get", 404)
    missing = demo_client.get("recordings/1/boosts.json")
    check_operation(missing, "/{accountId}/recordings/{recordingId}/boosts.json", "get", 404)
    check(demo_client.post(comments, body=b"{"), component("BadRequestErrorResponseContent"), 400)

    for action, status in (
        (FaultAction.refuse, 403),
        (FaultAction.rate_limit, 429),
        (FaultAction.server_error, 500),
    ):
        demo.add_fault(Fault(action, retry_after="3"))
        check_operation(demo_client.post(comments, {"content": "x"}), create_comment, "post", status)
