"""The episode lifecycle, below tasks and transports: `store` (raw SQLite: bookkeeping tables,
change triggers, meta, state hash), `query` (the where-DSL), `templates` (built once, cloned per
episode), `episode` (one private database, one transaction per call), `faults` (fault profiles),
`snapshots` (signed bytes and the validation of an upload), `textsafe` (text that cannot break
JSON)."""
