"""Per-role process checks of a team task (issue 34): derived, like `calls_made`, for a task with
`roles`. The team is graded on the final state as any task is; these add, for each role, that
every call made through its endpoint (refused attempts included) named one of its own tools."""

from __future__ import annotations

from collections.abc import Sequence

from mcpsim.engine import CallRecord
from mcpsim.grading._verdict import CheckResult
from mcpsim.tasks import Task

ROLE_TOOLS_CHECK = "role_tools"


def role_checks(task: Task, transcript: Sequence[CallRecord], roles: dict[int, str]) -> list[CheckResult]:
    """One `role_tools` check per role of `task` (none for a one-agent task), from the role each
    call was made by (`roles`, by transcript position; calls made by no role are not judged)."""
    results = []
    for name, role in task.roles.items():
        allowed = set(role.tools)
        own = [c for c in transcript if roles.get(c.seq) == name]
        over = [c for c in own if c.tool not in allowed]
        reason = (
            f"{len(own)} call(s), all of its own tools"
            if not over
            else f"it tried {', '.join(sorted({c.tool for c in over}))}, not among its tools"
            f" ({len(over)} attempt(s), refused)"
        )
        results.append(
            CheckResult(
                type=ROLE_TOOLS_CHECK,
                requirement=f"Role {name} called only its own tools ({', '.join(role.tools)})",
                weight=1.0,
                noop_passes=True,
                passed=not over,
                reason=reason,
            )
        )
    return results
