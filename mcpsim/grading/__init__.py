"""Grading an episode against its task's rubric: `Verifier` (fail-closed, bounded by work), one
evaluator per rubric check, the final answer read as typed facts, net changes compared with the
gold solution's, the verdict, and pass@1 / pass^k scores over many graded episodes."""

from mcpsim.grading._answers import claim_baseline, grade_answer, negate, stuffed_answer, word_forms
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
    "claim_baseline",
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
