"""Grading an episode's final state against its task's rubric (see `grader.Verifier`)."""

from mcpsim.grading.checks import GradingContext
from mcpsim.grading.grader import GradingUnavailable, Verifier
from mcpsim.grading.verdict import CheckResult, DiffEntry, Verdict

__all__ = ["CheckResult", "DiffEntry", "GradingContext", "GradingUnavailable", "Verdict", "Verifier"]
