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
# # Lesson 7: A rate limit, and what a faster transport buys under it
#
# The API limits each organization to so many requests a minute. A request over
# the limit is answered 429 with a `retry-after`, the client waits that long and
# sends it again. Lesson 5's fleet was limited by its pools; here it is limited by
# a contract.
#
# **Learning goals.** After this lesson you can
# - find the population at which a rate limit starts to bind, from Little's law;
# - explain why a binding limit erases what a faster transport buys;
# - read the 429s a limit causes, and why clients told the same `retry-after`
#   come back as a herd.
#
# About 20 minutes.

# %% [markdown] tags=["question"]
# Forty `codex-spark-fleet` agents (5 s between rollouts) share one organization
# limited to 900 requests a minute. Unlimited, WebSocket mode finishes a rollout
# in about 13 s and per-request HTTP in about 22 s. With the limit, how long does
# a rollout take over each transport, and how many 429s does a request meet?

# %% [markdown] tags=["commands"]
# ```sh
# loopbudget load codex-spark-fleet:ws --agents 10,20,40,80 --engine analytic \
#     --set rate_limit.requests_per_minute=900 --set 'load.think_time_s={kind="constant",value=5.0}'
# loopbudget load codex-spark-fleet:http --agents 40 \
#     --set rate_limit.requests_per_minute=900 --set 'load.think_time_s={kind="constant",value=5.0}'
# ```

# %% [markdown]
# ## 1. Predict
#
# Guess the mean end-to-end time of a rollout over WebSocket and over HTTP under
# the limit, and the 429s per request over WebSocket.

# %% tags=["prediction"] typical={"predicted_ws_s": 20, "predicted_http_s": 30, "predicted_429s": 1}
predicted_ws_s = None
predicted_http_s = None
predicted_429s = None

# %% [markdown]
# ## 2. Run the model
#
# The analytic fleet caps the throughput at what the organization admits and gives
# the rest of each cycle to the limit (Little's law: N agents cycling at X
# rollouts per second take N / X per cycle). A short fleet simulation checks it.

# %%
from sim import api
from sim.api import lessons

LIMIT = {
    "rate_limit.requests_per_minute": 900,
    "load.think_time_s": {"kind": "constant", "value": 5.0},
}
agents = [10, 20, 40, 80]
curves = {
    t: api.load_curve(f"codex-spark-fleet:{t}", agents=agents, overrides=LIMIT).to_frame()
    for t in ("http", "ws")
}
columns = ["load_agents", "e2e_s_mean", "rate_limit_refused_per_request"]
for transport, frame in curves.items():
    print(transport)
    print(frame[columns].round(2).to_string(index=False))
at_40 = {t: frame[frame["load_agents"] == 40].iloc[0] for t, frame in curves.items()}
think = {"load.think_time_s": LIMIT["load.think_time_s"]}
unlimited = {
    t: api.load_curve(f"codex-spark-fleet:{t}", agents=[40], overrides=think).points[0].e2e_s.mean
    for t in ("http", "ws")
}
print(f"unlimited at 40 agents: ws {unlimited['ws']:.1f} s, http {unlimited['http']:.1f} s")
turns = at_40["ws"]["turns_per_rollout"]
little_s = 40 / (900 / 60 / turns) - 5.0
print(f"Little's law: 40 agents / ({900 / 60:g} requests/s / {turns:.1f}) - 5 s = {little_s:.1f} s")

simulated = api.load_curve(
    "codex-spark-fleet:ws",
    agents=[40],
    engine="des",
    overrides={**LIMIT, "load.duration_s": 200, "load.warmup_s": 100, "load.replications": 2},
).points[0]
limited = simulated.fleet.rate_limit
print(
    f"simulated ws at 40 agents: {simulated.e2e_s.mean:.1f} s per rollout, "
    f"{limited.admitted_requests_per_min.mean:.0f} requests/min admitted, "
    f"{limited.refused_per_request:.1f} 429s per request"
)

# %% [markdown]
# ## 3. Check

# %%
lessons.check(
    predicted_ws_s,
    at_40["ws"]["e2e_s_mean"],
    what="seconds per rollout over WebSocket under the limit",
    close=0.2,
    why="40 agents can only cycle at 900 requests a minute: each cycle takes 40 / X "
    "whatever a turn costs, and the difference is spent refused.",
)
lessons.check(
    predicted_http_s,
    at_40["http"]["e2e_s_mean"],
    what="seconds per rollout over HTTP under the limit",
    close=0.2,
    why="the same cycle: the limit, not the transport, sets the pace, so HTTP's slower "
    "turns only shorten the time it waits refused.",
)
lessons.check(
    predicted_429s,
    at_40["ws"]["rate_limit_refused_per_request"],
    what="429s per request over WebSocket",
    close=0.3,
    why="every waiting client is told the same moment, so they all come back together "
    "and all but the first are refused again, dozens of times per request.",
)

# %% [markdown]
# ## Answer

# %% tags=["answer"]
ANSWER = """
Both transports take about 74 s per rollout under the limit (74.3 s over WebSocket
and 74.3 s over HTTP), against 13 s and 22 s unlimited: forty agents can only
cycle at the 900 requests a minute the organization is allowed, so a rollout's
cycle is 40 agents over that rate whatever a turn costs, and a faster transport
only waits longer refused. A WebSocket request meets about 31 429s, because the
clients told the same retry-after come back as a herd.
"""
lessons.stated(
    ANSWER,
    "about {} s per rollout under the limit ({} s over WebSocket and {} s over HTTP)",
    f"{at_40['ws']['e2e_s_mean']:.0f}",
    f"{at_40['ws']['e2e_s_mean']:.1f}",
    f"{at_40['http']['e2e_s_mean']:.1f}",
)
lessons.stated(
    ANSWER, "against {} s and {} s unlimited", f"{unlimited['ws']:.0f}", f"{unlimited['http']:.0f}"
)
lessons.stated(
    ANSWER, "meets about {} 429s", f"{at_40['ws']['rate_limit_refused_per_request']:.0f}"
)
assert abs(at_40["ws"]["e2e_s_mean"] - little_s) < 1e-6
assert abs(simulated.e2e_s.mean / at_40["ws"]["e2e_s_mean"] - 1) < 0.1
assert abs(limited.admitted_requests_per_min.mean / 900 - 1) < 0.02

# %% [markdown] tags=["instructor"]
# **For the instructor.** Students expect the WebSocket saving to survive the limit;
# Little's law shows why it cannot once the limit binds. Ask at how many agents it
# starts to bind over each transport (WebSocket's faster turns reach it with fewer
# agents: the curves' first capped point), and what a `retry-after` in whole seconds does to
# the herd (`--set rate_limit.retry_after_resolution_s=1`: about two 429s per
# request, for the same time refused). `docs/load.md`, section "Rate limits",
# compares the analytic fleet with the simulation.
