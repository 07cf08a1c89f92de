"""A team task's grading (issue 34). The team is graded on the final state as any task is; this
module adds, for a task with `roles`:

- each check's `roles`: the roles whose calls the check depends on (`check_roles`), from the
  role the engine recorded for each call and the change log's call of each row change;
- one derived `role_tools` check per role (like `calls_made`): every call made through its
  endpoint, refused attempts included, named one of its own tools."""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any

from mcpsim.engine import CallRecord, row_matches
from mcpsim.grading._checks import GradingContext
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
                roles=[name],
            )
        )
    return results


def attributed(
    task: Task,
    ctx: GradingContext,
    roles: dict[int, str],
    results: list[CheckResult],
    derived: list[CheckResult],
) -> list[CheckResult]:
    """The rubric's results, then the derived ones, each with its `roles` (`check_roles`)."""
    ranked = {name: n for n, name in enumerate(task.roles)}
    acted = _Acted(ctx, roles)
    out = []
    for check, result in zip(task.rubric, results, strict=True):
        out.append(result.model_copy(update={"roles": sorted(check_roles(check, acted), key=ranked.__getitem__)}))
    for result in derived:  # calls_made: every role that called; the report: the team's answer
        found = acted.callers(lambda c: True) if result.type == "calls_made" else set()
        out.append(result.model_copy(update={"roles": sorted(found, key=ranked.__getitem__)}))
    return out


class _Acted:
    """Who did what in one episode: the role of each call (by transcript position) and of each
    row change (by the call that made it)."""

    def __init__(self, ctx: GradingContext, roles: dict[int, str]) -> None:
        self.ctx, self.roles = ctx, roles
        self.changes = [(c, role) for c, role in ctx.episode.changes_by_role() if c.op != "fault"]

    def callers(self, which: Any, committed: bool = False) -> set[str]:
        return {
            self.roles[c.seq]
            for c in self.ctx.transcript
            if c.seq in self.roles and which(c) and (c.call_seq is not None or not committed)
        }

    def changers(self, table: str | None = None, where: dict[str, Any] | None = None) -> set[str]:
        """The roles whose calls changed rows of `table` (any table: None) that match `where`
        before or after the change."""
        found = set()
        schema = self.ctx.episode.world.metadata.tables.get(table) if table is not None else None
        for change, role in self.changes:
            if role is None or (table is not None and change.table != table):
                continue
            rows = [r for r in (change.before, change.after) if r is not None]
            if where and schema is not None and not any(row_matches(schema, r, where) for r in rows):
                continue
            found.add(role)
        return found


def _named(patterns: Any) -> Any:
    """A call predicate for tool patterns, or "writes", "reads", "any"."""
    if patterns == "writes":
        return lambda c: c.writes
    if patterns == "reads":
        return lambda c: not c.writes
    if patterns == "any":
        return lambda c: True
    return lambda c: any(fnmatchcase(c.tool, p) for p in patterns)


def check_roles(check: Any, acted: _Acted) -> set[str]:
    """The roles whose calls a check depends on: for a check of a table's rows, the roles whose
    calls changed rows of it that match its `where`; for the whole state (`gold_state`,
    `allowed_changes`), every role that changed a row; for a check of calls, the roles that made
    calls it names; for `cost` and a world's own `custom` check, every role that called; for the
    final answer, none (the team's answer is the harness's)."""
    kind = check.type
    if kind in ("row_exists", "row_absent", "field_equals", "row_count", "column_sum"):
        return acted.changers(check.table, check.where)
    if kind in ("gold_state", "allowed_changes"):
        return acted.changers()
    if kind == "tool_called":
        return acted.callers(lambda c: c.tool == check.tool, committed=True)
    if kind == "tool_not_called":
        return acted.callers(_named(check.tools), committed=not check.include_refused)
    if kind == "call_order":
        first, then = _named(check.first), _named(check.then)
        return acted.callers(lambda c: first(c) or then(c), committed=True)
    if kind == "confirmed":
        return acted.callers(_named(check.tools), committed=True)
    if kind in ("cost", "custom"):
        return acted.callers(lambda c: True)
    return set()  # answer_facts: the team's final answer
