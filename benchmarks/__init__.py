"""Speed and memory of the engines, as ratios against baselines measured in the same run.

Run ``python -m benchmarks.run [--quick]`` (or ``make bench``); see docs/performance.md.
"""
