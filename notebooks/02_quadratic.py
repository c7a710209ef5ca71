# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---


# %% [markdown]
# # Lesson 2: Quadratic against linear
#
# Over per-request HTTP the server rebuilds the whole conversation on every turn:
# it re-renders and re-classifies the history, which grows by one tool output per
# turn. Over WebSocket mode it processes only what is new.
#
# **Learning goals.** After this lesson you can
# - add up per-turn work that grows with the turn number into per-rollout work;
# - tell quadratic from linear growth on a log-log plot by its slope;
# - explain why a real system's slope sits between the ideal exponents.
#
# About 20 minutes.

# %% [markdown] tags=["question"]
# Over HTTP the server re-renders and re-classifies the whole history every turn.
# How does the render plus safety time of a rollout grow when the number of tool
# calls doubles from 20 to 40, over HTTP and over WebSocket?

# %% [markdown] tags=["commands"]
# ```sh
# loopbudget run codex-spark:http --engine analytic --set workload.tool_calls_per_rollout=20 --json
# loopbudget run codex-spark:http --engine analytic --set workload.tool_calls_per_rollout=40 --json
# ```
#
# (read `budget_s.render` and `budget_s.safety`; repeat with `:ws`)

# %% [markdown]
# ## 1. Predict
#
# Doubling the turns: by what factor does render plus safety time per rollout grow
# over HTTP, and over WebSocket?

# %% tags=["prediction"] typical={"predicted_http_factor": 4, "predicted_ws_factor": 2}
predicted_http_factor = None
predicted_ws_factor = None

# %% [markdown]
# ## 2. Run the model

# %%
from models.stages import Stage
from sim import api
from sim.api import lessons


def render_and_safety_s(transport: str, calls: int) -> float:
    result = api.run(
        "codex-spark",
        transport,
        engine="analytic",
        overrides={"workload.tool_calls_per_rollout": calls},
    )
    return result.budget_s[Stage.RENDER] + result.budget_s[Stage.SAFETY]


work_s = {(t, n): render_and_safety_s(t, n) for t in ("http", "ws") for n in (20, 40)}
factor = {t: work_s[t, 40] / work_s[t, 20] for t in ("http", "ws")}
for (transport, calls), seconds in work_s.items():
    print(f"{transport:>4}, {calls} calls: {seconds:.2f} s of render and safety per rollout")

# %% [markdown]
# On a log-log scale, work that grows as the square of the turns has slope 2 and
# linear work slope 1. Measure the slope over a range of rollout lengths:

# %%
import math
from itertools import pairwise

calls = [5, 10, 20, 40, 80, 160]
for transport in ("http", "ws"):
    points = [(n, render_and_safety_s(transport, n)) for n in calls]
    slopes = [math.log(b / a) / math.log(y / x) for (x, a), (y, b) in pairwise(points)]
    print(transport, " ".join(f"{s:.2f}" for s in slopes))

# %% [markdown]
# ## 3. Check

# %%
lessons.check(
    predicted_http_factor,
    factor["http"],
    what="HTTP growth factor",
    close=0.1,
    why="each HTTP turn also re-renders and re-classifies the fixed instructions and "
    "tool definitions, a term linear in the turns, so the factor stays below 4.",
)
lessons.check(
    predicted_ws_factor,
    factor["ws"],
    what="WebSocket growth factor",
    close=0.1,
    why="the first WebSocket turn processes the whole prompt once, a constant term, so "
    "the factor stays below 2.",
)

# %% [markdown]
# ## Answer

# %% tags=["answer"]
ANSWER = """
Over HTTP it grows from 3.63 s to 10.29 s per rollout, a factor of 2.83; over
WebSocket from 0.45 s to 0.80 s, a factor of 1.77. Not exactly 4 and 2: over
HTTP each turn also re-renders and re-classifies the fixed instructions and
tool definitions (a term linear in the turns), and over WebSocket the first
turn processes the whole prompt once (a constant term).
"""
lessons.stated(
    ANSWER,
    "Over HTTP it grows from {} s to {} s per rollout, a factor of {}; over WebSocket "
    "from {} s to {} s, a factor of {}.",
    f"{work_s['http', 20]:.2f}",
    f"{work_s['http', 40]:.2f}",
    f"{factor['http']:.2f}",
    f"{work_s['ws', 20]:.2f}",
    f"{work_s['ws', 40]:.2f}",
    f"{factor['ws']:.2f}",
)

# %% [markdown] tags=["instructor"]
# **For the instructor.** Students who know the sum 1 + 2 + ... + n predict 4 and
# 2, which is the right asymptote and the wrong number: the per-turn work is a
# fixed prompt plus a growing history, so the HTTP slope measured above rises
# towards 2 only for very long rollouts. Follow-up: at how many calls does the
# growing history outweigh the fixed prompt? (Where the slopes printed above
# pass 1.5.) The dashboard's scaling view draws the same curves.
