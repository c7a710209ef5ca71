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
# # Lesson 5: A fleet's bottleneck and its capacity
#
# One agent never waits for anyone. A fleet of agents shares one API cell: API
# workers, a state store, safety classifiers and inference slots
# (`codex-spark-fleet`'s `[capacity]` section). As the fleet grows one of those
# pools saturates first, and from then on every agent waits for it.
#
# **Learning goals.** After this lesson you can
# - find a queueing network's bottleneck from each pool's demand;
# - read utilization and latency against the number of agents;
# - state a capacity at a latency objective, and check a model with a simulation.
#
# About 20 minutes.

# %% [markdown] tags=["question"]
# A shared API cell serves a fleet of agents. Which pool saturates first over
# HTTP and over WebSocket, and how many agents does the cell serve over each
# before mean time to first token passes 0.5 s?

# %% [markdown] tags=["commands"]
# ```sh
# loopbudget load codex-spark-fleet:http --agents 50,100,200,400 --engine analytic
# loopbudget load codex-spark-fleet:ws --agents 200,400,800,1600 --engine analytic
# ```

# %% [markdown]
# ## 1. Predict
#
# Name the pool that saturates first over HTTP (`api`, `state_store`, `safety` or
# `inference`), and guess how many agents each transport serves at a mean TTFT of
# at most 0.5 s.

# %% tags=["prediction"] typical={"predicted_pool": "inference", "predicted_http_agents": 300, "predicted_ws_agents": 600}
predicted_pool = None
predicted_http_agents = None
predicted_ws_agents = None

# %% [markdown]
# ## 2. Run the model
#
# The analytic fleet (a queueing network solved by mean value analysis) gives the
# means at every population at once.

# %%
from models.stages import POOLS
from sim import api
from sim.api import lessons

agents = [50, 100, 200, 400, 800, 1600]
curves = {
    t: api.load_curve(f"codex-spark-fleet:{t}", agents=agents).to_frame() for t in ("http", "ws")
}
busy = [f"utilization_{pool.value}_mean" for pool in POOLS]
for transport, frame in curves.items():
    print(transport)
    print(
        frame[["load_agents", "ttft_s_mean", "e2e_s_mean", *busy]].round(3).to_string(index=False)
    )


def first_saturated(frame) -> str:
    """The pool with the highest utilization at the first load where one passes 95%."""
    row = frame[frame[busy].max(axis=1) >= 0.95].iloc[0]
    return row[busy].astype(float).idxmax().removeprefix("utilization_").removesuffix("_mean")


bottleneck = {t: first_saturated(frame) for t, frame in curves.items()}
capacity = {
    t: api.capacity_estimate("codex-spark-fleet", t, slos={"ttft_mean_s": 0.5})
    for t in ("http", "ws")
}
print(bottleneck, capacity)

# %% [markdown]
# The analytic fleet is a model of the simulation, not the simulation. A short
# fleet simulation at 100 agents over HTTP checks it (two replications of 60
# simulated seconds: a wide interval, but it should hold the model's mean).

# %%
checked = api.load_curve(
    "codex-spark-fleet:http",
    agents=[100],
    engine="des",
    overrides={"load.duration_s": 60, "load.warmup_s": 20, "load.replications": 2},
).points[0]
model_ttft_s = curves["http"].loc[curves["http"]["load_agents"] == 100, "ttft_s_mean"].item()
print(
    f"100 agents over HTTP: TTFT {checked.ttft_s.mean:.3f} s simulated, {model_ttft_s:.3f} s analytic"
)
print(f"safety classifiers busy {checked.fleet.utilization[POOLS[2]].mean:.0%} simulated")

# %% [markdown]
# ## 3. Check

# %%
print(f"Bottleneck over HTTP: {bottleneck['http']}; you said {predicted_pool}.")
lessons.check(
    predicted_http_agents,
    capacity["http"],
    what="agents over HTTP at mean TTFT <= 0.5 s",
    close=0.2,
    why="every HTTP turn re-classifies the whole history, so the classifiers' demand per "
    "turn grows with the rollout and they saturate long before inference does.",
)
lessons.check(
    predicted_ws_agents,
    capacity["ws"],
    what="agents over WebSocket at mean TTFT <= 0.5 s",
    close=0.2,
    why="WebSocket turns classify only the new input: the same classifiers serve many "
    "times the agents before they, again, saturate first.",
)

# %% [markdown]
# ## Answer

# %% tags=["answer"]
ANSWER = """
The safety classifiers saturate first over both transports. Mean TTFT stays at
or under 0.5 s up to 167 agents over HTTP and 1,374 agents over WebSocket, 8.2
times as many: WebSocket mode classifies only the new input of each turn, so the
same classifiers serve many more agents before the queue for them builds up.
"""
lessons.stated(
    ANSWER,
    "up to {} agents over HTTP and {} agents over WebSocket, {} times as many",
    f"{capacity['http']:,}",
    f"{capacity['ws']:,}",
    f"{capacity['ws'] / capacity['http']:.1f}",
)
assert bottleneck == {"http": "safety", "ws": "safety"}
assert "safety classifiers saturate first over both transports" in ANSWER

# %% [markdown] tags=["instructor"]
# **For the instructor.** Inference is the usual guess (it is the expensive part of
# one turn); the classifiers are the bottleneck because their demand per HTTP turn
# grows with the history while inference's prefill is mostly cached. The README's
# headline capacity (`loopbudget capacity` at percentile SLOs, with DES probes) is
# the same story with tails. Follow-up: double `capacity.safety_workers` and let
# them find the next bottleneck.
