"""The analytic fleet: service demands, the queueing network, KV residency and rate limits."""
