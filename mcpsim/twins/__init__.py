"""The `twins` package."""

from mcpsim.twins._infer import infer_twin
from mcpsim.twins._refine import refine_with_model
from mcpsim.twins._surface import read_surface
from mcpsim.twins._tasks import generate_twin_tasks, twin_task_set, validate_twin_tasks
from mcpsim.twins._twin_spec import TwinSpec, is_twin_file, load_twin
from mcpsim.twins._world import check_twin, compile_twin

__all__ = [
    "TwinSpec",
    "check_twin",
    "compile_twin",
    "generate_twin_tasks",
    "infer_twin",
    "is_twin_file",
    "load_twin",
    "read_surface",
    "refine_with_model",
    "twin_task_set",
    "validate_twin_tasks",
]
