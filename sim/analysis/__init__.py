"""Analysis: runs, summaries, statistics, capacity, traces (reads the engine's records)."""
