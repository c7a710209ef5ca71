"""The discrete-event engine (its own event queue, SimPy's order): random streams, draws,
connections, pools, the rate limiter, routing and KV residency, the engine and who runs it."""
