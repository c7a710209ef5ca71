"""The discrete-event engine (SimPy): random streams, draws, connections, pools, the rate
limiter, routing and KV residency, the engine itself and who runs it."""
