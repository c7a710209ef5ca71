"""Agent traces: readers of real traces into one per-request table, summaries, and the fit of a
scenario from them."""
