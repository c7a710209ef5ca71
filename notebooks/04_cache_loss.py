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
# # Lesson 4: When the cache is lost
#
# WebSocket mode keeps the conversation in a connection-scoped cache. A connection
# does not live forever: it is rotated after 60 minutes and it drops now and then.
# With `store=true` the next turn reloads the state from storage; with
# `store=false` (nothing kept on the server) the continuation fails with
# `previous_response_not_found` and the client resends the whole history.
#
# **Learning goals.** After this lesson you can
# - weigh an expensive event by how often it happens;
# - read the `recover` stage and the new connections per rollout;
# - see the same expectation in a simulation, rollout by rollout.
#
# About 20 minutes.

# %% [markdown] tags=["question"]
# With `store=false`, a WebSocket continuation whose connection dropped fails
# with `previous_response_not_found` and the client resends everything. What does
# that cost a rollout at 120 drops per hour, against `store=true`?

# %% [markdown] tags=["commands"]
# ```sh
# loopbudget run codex-spark:ws --engine analytic --set connection.ws_drops_per_hour=120 --set connection.store=true
# loopbudget run codex-spark:ws --engine analytic --set connection.ws_drops_per_hour=120 --set connection.store=false
# ```

# %% [markdown]
# ## 1. Predict
#
# How many seconds per rollout does `store=false` add at 120 drops per hour (one
# drop every 30 seconds)?

# %% tags=["prediction"] typical={"predicted_extra_s": 2.0}
predicted_extra_s = None

# %% [markdown]
# ## 2. Run the model

# %%
from models.stages import Stage
from sim import api
from sim.api import lessons

drops = {"connection.ws_drops_per_hour": 120}
stored = api.run("codex-spark:ws", engine="analytic", overrides={**drops, "connection.store": True})
resent = api.run(
    "codex-spark:ws", engine="analytic", overrides={**drops, "connection.store": False}
)
extra_s = resent.e2e_s.mean - stored.e2e_s.mean
print(f"store=true {stored.e2e_s.mean:.3f} s, store=false {resent.e2e_s.mean:.3f} s per rollout")
print(f"new connections per rollout: {resent.reconnects_per_rollout:.2f}")
print(f"recover stage: {resent.budget_s[Stage.RECOVER]:.3f} s per rollout")

# %% [markdown]
# The analytic engine gives the expectation. A small simulation shows the same
# cost as it happens: most rollouts lose no connection, a few lose one.

# %%
tables = api.records("codex-spark:ws", rollouts=300, overrides={**drops, "connection.store": False})
rollouts = tables.rollouts.to_pandas()
print(rollouts["new_connections"].value_counts().sort_index().rename("rollouts"))
print(f"simulated recover: {rollouts['recover_s'].mean():.3f} s per rollout")

# %% [markdown]
# ## 3. Check

# %%
lessons.check(
    predicted_extra_s,
    extra_s,
    what="seconds store=false adds per rollout",
    unit=" s",
    close=0.5,
    why="a loss costs a round trip and a full resend, but a rollout of about 13 s at one "
    "drop per 30 s loses its connection less than once on average.",
)

# %% [markdown]
# ## Answer

# %% tags=["answer"]
ANSWER = """
Almost nothing: 13.291 s against 13.305 s per rollout. A rollout opens 1.42
connections on average, so about 0.42 turns pay the failed attempt (the
`recover` stage, 0.014 s per rollout in all) and the full resend. A cache loss
is expensive per event but rare; it would matter for long rollouts on flaky
networks.
"""
lessons.stated(
    ANSWER,
    "Almost nothing: {} s against {} s per rollout. A rollout opens {} connections on "
    "average, so about {} turns pay the failed attempt (the `recover` stage, {} s per "
    "rollout in all)",
    f"{stored.e2e_s.mean:.3f}",
    f"{resent.e2e_s.mean:.3f}",
    f"{resent.reconnects_per_rollout:.2f}",
    f"{resent.reconnects_per_rollout - 1:.2f}",
    f"{resent.budget_s[Stage.RECOVER]:.3f}",
)

# %% [markdown] tags=["instructor"]
# **For the instructor.** Students tend to price the event (a full resend of a
# long history) rather than its expectation. Follow-up: make the rollout long and
# the network flaky (`workload.tool_calls_per_rollout` = 200, 600 drops per hour)
# and let them find where `store=false` starts to matter; and ask what `store=true`
# costs that the model leaves out (the storage itself).
