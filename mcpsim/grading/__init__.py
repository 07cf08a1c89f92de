"""Grading an episode's final state against its task's rubric (see `grader.Verifier`).

The names below are imported on first use (PEP 562), so a module that needs only
`mcpsim.grading._verdict` (a served episode, the config) does not load the checks and their
language tools."""

from mcpsim.grading._answers import grade_answer, negate, stuffed_answer, word_forms
from mcpsim.grading._checks import NOTHING_TO_NAME, GradingContext
from mcpsim.grading._diff import compare_with_gold
from mcpsim.grading._grader import GradingUnavailable, Verifier
from mcpsim.grading._scores import Outcome, mean, pass_at_1, pass_hat_k
from mcpsim.grading._verdict import CheckResult, DiffEntry, Verdict, VerdictDetail, VerdictSummary, load_verdict, shown

__all__ = [
    "CheckResult",
    "DiffEntry",
    "GradingContext",
    "GradingUnavailable",
    "NOTHING_TO_NAME",
    "Outcome",
    "Verdict",
    "VerdictDetail",
    "VerdictSummary",
    "Verifier",
    "compare_with_gold",
    "grade_answer",
    "load_verdict",
    "mean",
    "negate",
    "pass_at_1",
    "pass_hat_k",
    "shown",
    "stuffed_answer",
    "word_forms",
]
