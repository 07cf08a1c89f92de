"""Validation of a spec file mcpsim did not ship, in the sandbox (`mcpsim._sandbox`): `mcpsim gen
SPEC` and `python -m mcpsim.acceptance validate` parse, compile and validate it in a child process
within CPU-time, memory and wall-clock limits, and only the report (JSON) comes back. A spec that
runs away costs the child, and the caller gets `CompileRefused` with the reason. (A model's reply,
`mcpsim gen --describe`, is checked the same way: `_describe.ReplyCheck`.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpsim._sandbox import CompileLimits, run_now
from mcpsim.acceptance._validate import validate
from mcpsim.specs import SpecError, compile_spec, load_spec


@dataclass(frozen=True)
class FileValidation:
    """A spec file compiled and validated, as the child runs it: {"error": the spec's problem} or
    {"report": the validation report}."""

    seed: int
    scale: str
    task_count: int | None

    def __call__(self, path: str) -> dict[str, Any]:
        try:
            compiled = compile_spec(load_spec(path))
        except SpecError as exc:
            return {"error": str(exc)}
        return {"report": validate(compiled, seed=self.seed, scale=self.scale, task_count=self.task_count).to_json()}


def validate_file(
    path: str, limits: CompileLimits | None = None, *, seed: int, scale: str, task_count: int | None
) -> dict[str, Any]:
    """`FileValidation` of the spec at `path` in the sandbox, within `limits` (default: the
    environment's, `CompileLimits.from_env`); CompileRefused if it goes past one."""
    return dict(run_now(FileValidation(seed, scale, task_count), path, limits or CompileLimits.from_env()))
