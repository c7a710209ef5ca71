"""Capacity at latency SLOs: the objectives, the analytic estimate and the search."""
