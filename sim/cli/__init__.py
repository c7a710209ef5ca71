"""The ``loopbudget`` command line."""
