"""Analysis: runs, summaries, results, metrics, statistics, warm-up, verdicts, estimates."""
