"""Reports of a simulated run's records: tables by file suffix and trace files."""
