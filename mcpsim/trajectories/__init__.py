"""Trajectories: `schema` (one JSONL record per episode, OpenAI chat messages), `recording` (any
served episode as a trajectory) and `export` (OpenAI, TRL, verifiers and parquet datasets)."""
