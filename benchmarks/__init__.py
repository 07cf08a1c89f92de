"""mcpsim's performance benchmark suite: `python benchmarks/run.py` (see docs/benchmarks.md)."""
