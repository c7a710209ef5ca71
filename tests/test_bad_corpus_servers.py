"""The corpus's server cases: each bad request gets the service's error shape, and the
emulator goes on answering."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from bad_corpus import CASES, case_id
from server_cases import TIME_SCALE, Servers, idle_connections, run_http, run_ws

from sim.testbed import clock

SERVER_CASES = [case for case in CASES if "server" in case]


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    running = Servers()
    yield running
    running.close()


@pytest.mark.live
@pytest.mark.parametrize("case", SERVER_CASES, ids=map(case_id, SERVER_CASES))
def test_every_server_case_is_the_services_error_shape_and_the_server_goes_on(
    case: dict[str, Any], servers: Servers
) -> None:
    base_url = servers.url(case.get("limits", {}), case.get("time_scale", TIME_SCALE))
    with idle_connections(base_url, case.get("idle", 0)):
        if case["server"] == "http":
            run_http(case, base_url)
        else:
            clock.run(lambda: run_ws(case, base_url))
    # the server answers a valid request afterwards, on a new connection
    run_http({"requests": [{"body": "{valid}", "status": 200}]}, base_url)
