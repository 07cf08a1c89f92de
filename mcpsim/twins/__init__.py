"""The `twins` package."""

from mcpsim.twins._infer import (
    WRITES,
    RecordedAnswer,
    TwinSpec,
    TwinTool,
    infer_twin,
    inline_refs,
    is_twin_file,
    load_twin,
    object_items,
    properties_of,
    read_surface,
    refine_with_model,
)
from mcpsim.twins._tasks import generate_twin_tasks, twin_task_set, validate_twin_tasks
from mcpsim.twins._world import check_twin, compile_twin, first_option, key_of, texts_in

__all__ = [
    "RecordedAnswer",
    "TwinSpec",
    "TwinTool",
    "WRITES",
    "check_twin",
    "compile_twin",
    "first_option",
    "generate_twin_tasks",
    "infer_twin",
    "inline_refs",
    "is_twin_file",
    "key_of",
    "load_twin",
    "object_items",
    "properties_of",
    "read_surface",
    "refine_with_model",
    "texts_in",
    "twin_task_set",
    "validate_twin_tasks",
]
