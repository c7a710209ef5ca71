"""Agent traces: readers of real traces into one per-request table, summaries, and the fit of a
scenario from them."""

DEFAULT_PRESET = "codex-spark"
"""The preset a fitted scenario extends for what the traces do not show (here, not in
``sim.traces.fit``, so that the command line names it without importing the fit)."""
