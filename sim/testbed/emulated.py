"""What the testbed does not emulate: settings a live run refuses rather than ignores.

The emulator serves one request per turn at the costs of the stage table and the
driver runs the SDK's own loop, so behaviours modelled on top of that (the
simulation's) have no live counterpart yet; a run with one of them on would be
compared against a simulation of something it did not do.
"""

from __future__ import annotations

from collections.abc import Callable

from models.errors import ScenarioError
from models.scenario import Scenario

UNEMULATED: tuple[tuple[str, Callable[[Scenario], object], str], ...] = (
    ("rate_limit.requests_per_minute", lambda s: s.rate_limit.requests_per_minute, "0"),
    ("rate_limit.tokens_per_minute", lambda s: s.rate_limit.tokens_per_minute, "0"),
    ("retries.server_error_prob", lambda s: s.retries.server_error_prob, "0"),
    ("compaction.threshold_tokens", lambda s: s.compaction.threshold_tokens, "0"),
    ("kv_cache.residency", lambda s: s.kv_cache.residency, "false"),
    ("connection.reuse_across_rollouts", lambda s: s.connection.reuse_across_rollouts, "false"),
    ("client.tool_starts_on_call_item", lambda s: s.client.tool_starts_on_call_item, "false"),
)
"""(field, its value in a scenario, the value the testbed needs)."""


def check_emulated(scenario: Scenario) -> None:
    """Refuse, in one line, a scenario that asks for what the testbed does not emulate."""
    for path, value, needed in UNEMULATED:
        current = value(scenario)
        if current:
            shown = str(current).lower() if isinstance(current, bool) else f"{current:g}"
            raise ScenarioError(
                f"{path} = {shown}: the testbed does not emulate it; set it to {needed} "
                "(the simulation models it: loopbudget run, load)"
            )


def check_real(scenario: Scenario, time_scale: float, base_url: str | None) -> None:
    """Refuse, in one line, what the real engine cannot run: its stages take the time they
    take (no time scale), it serves one agent, and it is the local emulator's."""
    if time_scale != 1.0:
        raise ScenarioError(
            f"--time-scale = {time_scale:g}: the real engine runs in real time; use 1"
        )
    if scenario.load.agents > 1:
        raise ScenarioError(
            f"load.agents = {scenario.load.agents}: the real engine serves one agent; use 1"
        )
    if base_url is not None:
        raise ScenarioError("--base-url: the real engine runs behind the local emulator")
