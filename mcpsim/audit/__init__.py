"""The `audit` package."""

from mcpsim.audit._audit import BASELINE_LABELS, WorldReport, check_task, check_world

__all__ = [
    "BASELINE_LABELS",
    "WorldReport",
    "check_task",
    "check_world",
]
