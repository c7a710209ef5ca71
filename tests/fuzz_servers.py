"""Generated hostile input for the testbed's endpoints and the Python API (Hypothesis).

Bodies are a valid ``response.create`` with one field replaced by an arbitrary
JSON value (wrong types, NaN and infinities, deep lists, huge integers), or raw
text and bytes; WebSocket frames are such bodies as ``response.create`` events,
on named lanes or not, and other events; API calls take arguments of every type
a notebook could pass.  Everything is small and bounded: at most a few kilobytes
of text, nesting of at most a few thousand brackets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hypothesis import strategies as st

VALID: dict[str, Any] = {
    "model": "m",
    "input": "task",
    "instructions": "be brief",
    "tools": [{"type": "function", "name": "read", "description": "d", "parameters": {}}],
    "metadata": {"loopbudget_rollout": "0"},
    "store": True,
}
FIELDS = [
    "model",
    "input",
    "instructions",
    "tools",
    "metadata",
    "previous_response_id",
    "store",
    "stream",
    "generate",
]
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
ITEMS = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["message", "function_call", "function_call_output", "x"])
        | JSON_VALUES,
        "role": st.sampled_from(["user", "assistant"]) | JSON_VALUES,
        "content": JSON_VALUES,
        "call_id": JSON_VALUES,
        "output": JSON_VALUES,
        "arguments": JSON_VALUES,
    },
)


def _with(field: str, value: Any) -> str:
    return json.dumps({**VALID, field: value})


BODIES = st.one_of(
    st.builds(_with, st.sampled_from(FIELDS), JSON_VALUES),
    st.builds(_with, st.just("input"), st.lists(ITEMS, max_size=3)),
    st.builds(
        _with,
        st.just("tools"),
        st.lists(st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=3), max_size=2),
    ),
    st.builds(
        _with,
        st.just("metadata"),
        st.dictionaries(
            st.sampled_from(["loopbudget_rollout", "loopbudget_replication", "a"]),
            st.text(max_size=12) | JSON_VALUES,
            max_size=3,
        ),
    ),
    st.integers(1, 4000).map(lambda n: json.dumps(VALID).replace('"task"', "[" * n + "]" * n)),
    st.integers(4000, 5000).map(lambda n: json.dumps(VALID).replace('"0"', "9" * n)),
    st.text(max_size=200),
    st.binary(max_size=200).map(lambda raw: raw.decode("latin-1")),
)
"""Request bodies as text."""

QUERY_VALUES = st.text(max_size=12).map(quote)
TESTBED_PATHS = st.one_of(
    st.builds("/v1/testbed/log?since={}".format, QUERY_VALUES),
    st.builds("/v1/testbed/pools?start={}&end={}".format, QUERY_VALUES, QUERY_VALUES),
    st.sampled_from(["/v1/testbed/stats", "/v1/responses", "/v1/other", "/", "/v1/testbed/log"]),
)
METHODS = st.sampled_from(["GET", "POST", "PUT", "DELETE"])


def _event(body: str, lane: Any) -> str:
    try:
        event = json.loads(body)
    except ValueError:
        return body
    if not isinstance(event, dict):
        return body
    event["type"] = "response.create"
    if lane is not None:
        event["stream_id"] = lane
    return json.dumps(event)


FRAMES = st.one_of(
    st.builds(_event, BODIES, st.none() | st.sampled_from(["a", "b"]) | JSON_VALUES),
    st.builds(lambda kind: json.dumps({"type": kind}), st.text(max_size=20)),
    BODIES,
)
"""WebSocket frames: ``response.create`` events of generated bodies, other events, raw text."""

API_ARGUMENTS = st.one_of(
    JSON_VALUES,
    st.sampled_from(
        [
            "codex-spark",
            "codex-spark:ws",
            "gpt5-flagship:http",
            "codex-spark:tcp",
            Path("tests/data/tiny-fleet.toml"),
            Path("no/such.toml"),
            10**4300,
            -1,
            0,
            2,
            True,
        ]
    ),
)
"""Arguments of every type a notebook could pass to ``sim.api``."""
OVERRIDES = st.one_of(
    st.none(),
    st.dictionaries(
        st.sampled_from(["network.rtt_ms", "seed", "load.agents", "workload.tools[0].weight", "x"]),
        JSON_VALUES,
        max_size=2,
    ),
    st.lists(st.text(max_size=30), max_size=2),
    JSON_VALUES,
)
