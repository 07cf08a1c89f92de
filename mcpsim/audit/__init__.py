"""The `audit` package."""

from mcpsim.audit._audit import check_task, check_world
from mcpsim.audit._baselines import BASELINE_LABELS, RATED
from mcpsim.audit._report import WorldReport

__all__ = [
    "BASELINE_LABELS",
    "RATED",
    "WorldReport",
    "check_task",
    "check_world",
]
