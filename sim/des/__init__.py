"""The discrete-event engine (its own event queue, SimPy's order): random streams, draws,
connections, pools, the rate limiter, routing and KV residency, the engine and who runs it."""

from sim.des import compiled

COMPILED = compiled.choose()
"""Whether the event loop's compiled modules run (``sim.des.compiled``)."""
