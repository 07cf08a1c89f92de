"""The `taskgen` package."""

from mcpsim.taskgen._alternatives import reworded
from mcpsim.taskgen._generator import (
    TaskGenerator,
    candidates_digest,
    generate_tasks,
    keep_sound,
    plans_in_turn,
    task_check,
    task_set,
)
from mcpsim.taskgen._wording import GREETING_SLOT, GREETINGS, PERSONAS, plural

__all__ = [
    "GREETINGS",
    "GREETING_SLOT",
    "PERSONAS",
    "TaskGenerator",
    "candidates_digest",
    "generate_tasks",
    "keep_sound",
    "plans_in_turn",
    "plural",
    "reworded",
    "task_check",
    "task_set",
]
