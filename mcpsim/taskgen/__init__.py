"""The `taskgen` package."""

from mcpsim.taskgen._generator import (
    GREETING_SLOT,
    GREETINGS,
    PERSONAS,
    TaskGenerator,
    candidates_digest,
    generate_tasks,
    keep_sound,
    plans_in_turn,
    plural,
    reworded,
    task_check,
    task_set,
)

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
