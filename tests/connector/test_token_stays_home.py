"""The agent's token never travels to another host, whatever URL a hostile Basecamp hands back:
the real ``bin/connect run`` against the stand-in behind a proxy that rewrites the feed's ``next``
(``core.links``, ``shell.basecamp.wire``), and a second listener on 127.0.0.2
that records every byte it is sent.

``http://127.0.0.2:PORT\\@127.0.0.1:ORIGIN/...`` is the configured origin to ``urlsplit`` (the host
after the ``@``) and 127.0.0.2 to urllib3 (whose authority ends at the backslash): followed as
a URL, it sent the agent's token and its feed position to 127.0.0.2."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from shell.basecamp.standin.server import StandIn
from tests.support.child import wait_until
from tests.support.configured import configure_connector, start_run
from tests.support.hostile_basecamp import Answered, HostileBasecamp, Rewrite, Trap

pytestmark = pytest.mark.slow


def _hostile_next(next_url: str) -> Rewrite:
    def rewrite(answer: Answered) -> Answered:
        if "/events.json" not in answer.path or answer.status != 200:
            return answer
        page = json.loads(answer.body)
        page["next"] = next_url
        return Answered(answer.path, answer.status, answer.headers, json.dumps(page).encode())

    return rewrite


@pytest.mark.parametrize(
    "shape",
    [
        "http://{trap}\\@{origin}/{account}/events.json?position=stolen",  # parsers disagree
        "http://{trap}@{origin}/{account}/events.json?position=stolen",  # userinfo
        "http://{trap}/{account}/events.json?position=stolen",  # another loopback host, plainly
    ],
)
def test_a_feed_next_to_another_host_never_carries_the_token_there(
    tmp_path: Path, shape: str
) -> None:
    with StandIn(world="demo") as standin, Trap("127.0.0.2") as trap, HostileBasecamp(standin.base_url) as hostile:
        origin = hostile.base_url.removeprefix("http://")
        account = standin.world.account_id
        hostile.rewrite = _hostile_next(shape.format(trap=f"{trap.host}:{trap.port}", origin=origin, account=account))
        state = configure_connector(standin, tmp_path, base_url=hostile.base_url)  # only the proxy is known
        process = start_run(state)
        try:
            wait_until(lambda: hostile.rewritten >= 3 or trap.connections > 0, timeout=60)
        finally:
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=60)
    assert trap.connections == 0, f"the connector connected to {trap.host}: {trap.received()[:200]!r}"
    assert standin.world.token not in err
    assert process.returncode == 0, err
