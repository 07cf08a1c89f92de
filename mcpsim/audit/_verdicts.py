"""How a verdict that did not pass reads in the audit's problems and details."""

from __future__ import annotations

from mcpsim.grading import Verdict

__all__ = ["failed_checks"]


def failed_checks(verdict: Verdict) -> str:
    return verdict.failure or "; ".join(f"{c.requirement} ({c.reason})" for c in verdict.checks if not c.passed)
