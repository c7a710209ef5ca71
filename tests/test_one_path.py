"""One path per job: the command line, the Python API and the dashboard run a load curve
through ``sim.analysis.load_curve``, so bad input is refused by each with the same line."""

from __future__ import annotations

import pytest
from app_support import upload
from streamlit.testing.v1 import AppTest
from support import assert_one_line_error, scenario

from models.errors import ScenarioError
from sim import api
from sim.dashboard.load import load_point
from sim.turn.transports import Transport

pytestmark = pytest.mark.slow

TOO_SHORT = "load.duration_s=0.5"
"""A measured window in which two agents cannot start one rollout."""


def test_a_window_too_short_to_measure_is_refused_alike_by_every_front_end(
    cli, app: AppTest
) -> None:
    result = cli("load", "codex-spark:http", "--agents", "2", "--set", TOO_SHORT)
    assert_one_line_error(result, "load.duration_s", "codex-spark:http at 2 agents")
    line = result.stderr.strip().removeprefix("error: ")

    with pytest.raises(ScenarioError) as from_api:
        api.load_curve("codex-spark:http", agents=[2], engine="des", overrides=[TOO_SHORT])
    assert str(from_api.value) == line

    with pytest.raises(ScenarioError) as from_dashboard_call:
        load_point(scenario("codex-spark", TOO_SHORT), Transport.HTTP, 2)
    assert str(from_dashboard_call.value) == line

    toml = b'extends = "codex-spark"\nname = "codex-spark"\n[load]\nduration_s = 0.5\n'
    upload(app, "short.toml", toml)
    app.text_input(key="load:agents").set_value("2").run()
    assert not app.exception
    assert line in [e.value for e in app.error]


def test_the_api_refuses_a_capacity_bound_below_one_as_the_command_line_does(cli) -> None:
    with pytest.raises(ScenarioError, match="max_agents = 0"):
        api.capacity("codex-spark:ws", slos={"ttft_p95_s": 1.0}, max_agents=0)
    result = cli("capacity", "codex-spark", "--slo", "ttft_p95_s=1", "--max-agents", "0")
    assert_one_line_error(result, "--max-agents = 0")
