"""Parameter sweeps: sweep files, design expansion, batched and distributed execution,
crash-safe Parquet results and plots.

The modules, in the order a sweep flows through them: ``sweepfile`` (the TOML
model), ``design`` (points), ``points`` (a point's scenario), ``rows`` (flat
result rows), ``tasks`` (what a worker runs; an analytic chunk goes through the
batched engine, ``sim.analytic.agent.engine.expect_columns``), ``store`` (the results
directory), ``execute`` (local or Dask execution with progress), ``plots``, ``bands`` and
``labels`` (figures), ``commands`` (the ``sweep`` and ``plot`` commands).
"""
