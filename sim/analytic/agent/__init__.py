"""The analytic single agent: expected per-turn work and stage costs in column form."""
