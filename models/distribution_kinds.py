"""The ``kind`` tags of the distributions, without the distributions: reading a scenario
file merges a distribution whole by its tag before anything imports numpy or pydantic."""

KINDS = ("constant", "exponential", "lognormal", "uniform", "empirical", "mixture")
"""The ``kind`` tags of the distributions."""
