"""The ``kind`` tags of the distributions, without numpy or pydantic.

Reading a scenario file merges a distribution whole by its tag (``models.loading``)
before the scenario model loads.
"""

KINDS = ("constant", "exponential", "lognormal", "uniform", "empirical", "mixture")
"""The ``kind`` tags of the distributions."""
