"""core.posting: the closed outcome table of one create request."""

import pytest

from core.posting import Created, RefusalCause, Refused, Uncertain, UncertainCause, classify_answer


@pytest.mark.parametrize("status", [200, 201, 299])
def test_a_2xx_with_an_id_is_a_receipt(status: int) -> None:
    assert classify_answer(status, {"id": 1069479407}) == Created(1069479407)


def test_the_smallest_positive_id_is_a_receipt() -> None:
    assert classify_answer(201, {"id": 1}) == Created(1)


@pytest.mark.parametrize(
    "body", [None, {}, {"id": None}, {"id": "12"}, {"id": 0}, {"id": -3}, {"id": True}, []]
)
def test_a_2xx_without_a_usable_id_is_uncertain(body: object) -> None:
    assert classify_answer(201, body) == Uncertain(
        UncertainCause.no_id, 201, "HTTP 201 without a message id"
    )


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 415, 422, 429])
def test_a_4xx_is_refused_and_nothing_was_created(status: int) -> None:
    outcome = classify_answer(status, {"error": "nope"})
    assert isinstance(outcome, Refused)
    assert outcome.cause is RefusalCause.answered
    assert outcome.status == status


def test_a_429_refusal_carries_its_retry_after_and_others_do_not() -> None:
    assert classify_answer(429, None, 7.0) == Refused(
        RefusalCause.answered, 429, "Basecamp refused the request: HTTP 429", 7.0
    )
    refused = classify_answer(403, None, 7.0)
    assert isinstance(refused, Refused)
    assert refused.retry_after_seconds is None


@pytest.mark.parametrize("status", [500, 502, 503, 504, 507])
def test_a_5xx_is_uncertain(status: int) -> None:
    assert classify_answer(status, {"id": 5}) == Uncertain(
        UncertainCause.server_error, status, f"Basecamp answered HTTP {status}"
    )


@pytest.mark.parametrize("status", [100, 300, 301, 302, 304])
def test_anything_else_is_uncertain(status: int) -> None:
    assert classify_answer(status, {"id": 5}) == Uncertain(
        UncertainCause.no_id, status, f"unexpected HTTP {status}"
    )
