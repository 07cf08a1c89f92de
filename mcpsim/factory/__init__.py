"""The world factory: worlds compiled from a declarative spec (`spec`), in memory (`compiler`),
their tasks generated (`taskgen`), validated before they are accepted (`validate`), and loaded
into a process's registry of worlds (`loading`: `--world-spec`, `--worlds-dir`).
`python -m mcpsim.factory` serves, hashes and validates spec files; `mcpsim gen --validate SPEC`
does the last."""

from mcpsim.factory.compiler import CompiledWorld, compile_spec, compile_world, load_world_spec
from mcpsim.factory.spec import SpecError, WorldSpec, json_schema, load_spec, parse_spec
from mcpsim.factory.taskgen import generate_tasks, task_set
from mcpsim.factory.validate import CHECKS, ValidationReport, validate

__all__ = [
    "CHECKS",
    "CompiledWorld",
    "SpecError",
    "ValidationReport",
    "WorldSpec",
    "compile_spec",
    "compile_world",
    "generate_tasks",
    "json_schema",
    "load_spec",
    "load_world_spec",
    "parse_spec",
    "task_set",
    "validate",
]
