"""``loopbudget profile``: each stage of the real backend measured alone, fitted in the model's
terms and written as a profile TOML (``profile_file``) that ``testbed --engine real`` predicts
from.  ``measure`` needs the optional group ``engine``; ``fit`` and ``profile_file`` do not.
"""
