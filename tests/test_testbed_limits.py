"""What a client can make the emulator hold: stored responses, the log, a pool's history."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time

import httpx2
import pytest
from server_cases import AUTH, FRESH_CONNECTIONS, create

from models.loading import load_scenario
from sim.testbed.limits import MB, Limits
from sim.testbed.log import RequestLog
from sim.testbed.server import GRACEFUL_SHUTDOWN_S, ServerSettings, emulator_process
from sim.testbed.state import ITEM_OVERHEAD_BYTES, ResponseState, ResponseStore
from sim.testbed.timescale import scale_time


def state(number: int, tokens: float, items: int = 1) -> ResponseState:
    context = tuple({"type": "message", "content": "x"} for _ in range(items))
    return ResponseState(f"resp_{number}", context, tokens, "k", 0, 0, store=True)


def test_the_store_keeps_its_budget_oldest_first() -> None:
    store = ResponseStore(bytes_per_token=4.0, ttl_s=3600.0, budget_bytes=10_000.0)
    charge = 1000 * 4.0 + ITEM_OVERHEAD_BYTES
    for number in range(5):
        store.put(state(number, 1000))
    assert len(store) == 2 and store.bytes == 2 * charge
    assert store.get("resp_0") is None and store.get("resp_4") is not None
    store.put(ResponseState("resp_x", (), 0.0, "k", 0, 0, store=False))
    assert store.get("resp_x") is None, "store=false responses are never kept"


def test_the_store_forgets_a_response_after_its_time_to_live(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    store = ResponseStore(bytes_per_token=4.0, ttl_s=10.0, budget_bytes=1e9)
    store.put(state(0, 10))
    now[0] += 5.0
    store.put(state(1, 10))
    now[0] += 6.0
    assert store.get("resp_0") is None and store.get("resp_1") is not None
    assert len(store) == 1


def test_the_log_keeps_its_newest_records_and_offsets_stay_valid() -> None:
    log = RequestLog(kept=3)
    for index in range(5):
        log.refused("http", f"code{index}", 0.0, 0.0)
    assert len(log) == 5
    assert [r["error_code"] for r in log.since(0)] == ["code2", "code3", "code4"]
    assert [r["error_code"] for r in log.since(4)] == ["code4"]
    assert log.since(5) == []


@pytest.mark.live
def test_large_stored_inputs_stay_within_the_budget_and_the_oldest_is_forgotten() -> None:
    """100 requests of 10 MB each used to keep 1 GB for good; now the budget holds."""
    budget = 32 * MB
    scenario = scale_time(load_scenario("codex-spark"), 0.01)
    limits = Limits(store_budget_bytes=budget, max_body_bytes=16 * MB)
    with (
        emulator_process(scenario, ServerSettings(limits=limits)) as url,
        httpx2.Client(timeout=60, headers=AUTH, limits=FRESH_CONNECTIONS) as client,
    ):
        ids = []
        for _ in range(12):
            answer = client.post(url + "/responses", json=create("x" * 10 * MB))
            assert answer.status_code == 200
            ids.append(answer.json()["id"])
        stats = client.get(url + "/testbed/stats").json()
        assert 0 < stats["stored_bytes"] <= budget
        assert stats["stored_responses"] == 3
        again = {"previous_response_id": ids[0]}
        stale = client.post(url + "/responses", json=create("go", again))
        assert stale.status_code == 400
        assert stale.json()["error"]["code"] == "previous_response_not_found"
        latest = {"previous_response_id": ids[-1]}
        assert client.post(url + "/responses", json=create("go", latest)).status_code == 200


@pytest.mark.live
def test_one_ctrl_c_stops_serve_while_a_request_is_in_flight() -> None:
    """uvicorn waited for requests in flight (19 s and more) before it stopped."""
    command = [sys.executable, "-c", "from sim.cli.app import main; main()"]
    arguments = ["testbed", "serve", "codex-spark", "--time-scale", "20"]
    server = subprocess.Popen([*command, *arguments], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)/v1", line)[1])
        body = json.dumps(create("x" * 200_000)).encode()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as held:
            head = (
                f"POST /v1/responses HTTP/1.1\r\nhost: x\r\nauthorization: {AUTH['authorization']}"
                f"\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
            )
            held.sendall(head.encode() + body)
            time.sleep(0.5)
            stopped_s = time.monotonic()
            server.send_signal(signal.SIGINT)
            server.wait(timeout=10)
            assert time.monotonic() - stopped_s < GRACEFUL_SHUTDOWN_S + 3.0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        server.stdout.close()
