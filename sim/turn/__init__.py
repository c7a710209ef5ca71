"""The turn both engines share: per-turn inputs, transports as scopes of work, compaction,
the phases of a turn through the pools, and the records a run keeps."""
