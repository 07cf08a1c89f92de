"""Grading an episode's final state against its task's rubric (see `grader.Verifier`).

The names below are imported on first use (PEP 562), so a module that needs only
`mcpsim.grading.verdict` (a served episode, the config) does not load the checks and their
language tools."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpsim.grading.checks import GradingContext
    from mcpsim.grading.grader import GradingUnavailable, Verifier
    from mcpsim.grading.verdict import CheckResult, DiffEntry, Verdict

_HOMES = {
    "GradingContext": "checks",
    "GradingUnavailable": "grader",
    "Verifier": "grader",
    "CheckResult": "verdict",
    "DiffEntry": "verdict",
    "Verdict": "verdict",
}

__all__ = ["CheckResult", "DiffEntry", "GradingContext", "GradingUnavailable", "Verdict", "Verifier"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
