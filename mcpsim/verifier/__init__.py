"""Grading an episode's final state against its task's rubric (see `grader.Verifier`)."""

from mcpsim.verifier.checks import GradingContext
from mcpsim.verifier.grader import GradingUnavailable, Verifier
from mcpsim.verifier.verdict import CheckResult, DiffEntry, Verdict

__all__ = ["CheckResult", "DiffEntry", "GradingContext", "GradingUnavailable", "Verdict", "Verifier"]
