"""What grading returns: a verdict with per-check results and a readable row-level diff."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class CheckResult(BaseModel):
    type: str
    requirement: str
    weight: float
    noop_passes: bool
    passed: bool
    reason: str


class DiffEntry(BaseModel):
    """One net change the episode made: an inserted or deleted row (column None), or one
    column of an updated row."""

    table: str
    key: str
    op: str  # insert | update | delete
    column: str | None = None
    before: Any = None
    after: Any = None

    def __str__(self) -> str:
        if self.op == "update":
            return f"{self.table} {self.key} {self.column}: {self.before!r} -> {self.after!r}"
        row = self.after if self.op == "insert" else self.before
        shown = ", ".join(f"{c}={v!r}" for c, v in list((row or {}).items())[:6])
        return f"{self.table} {self.key}: {'inserted' if self.op == 'insert' else 'deleted'} {{{shown}}}"


class Verdict(BaseModel):
    task_id: str
    world: str
    world_version: str
    episode_id: str | None = None
    passed: bool  # strict: every check passed and nothing failed closed
    reward: float  # 1.0 when passed, else 0.0
    partial_reward: float  # weighted share of checks passed in [0, 1]; 0.0 when failed closed
    failure: str | None = None  # why the verdict failed closed (reward 0 whatever the checks say)
    checks: list[CheckResult] = []
    diff: list[DiffEntry] = []
    answer: str | None = None
    calls: int = 0
    state_hash: str | None = None  # of the graded (frozen) state

    def report(self) -> str:
        """A few lines a person can read."""
        head = "PASS" if self.passed else "FAIL"
        lines = [f"{head} {self.task_id}: reward {self.reward:.0f}, partial {self.partial_reward:.2f}"]
        if self.failure:
            lines.append(f"  failed closed: {self.failure}")
        for c in self.checks:
            lines.append(f"  [{'x' if c.passed else ' '}] {c.requirement} ({c.reason})")
        if self.diff:
            lines.append("  changes:")
            lines.extend(f"    {d}" for d in self.diff[:50])
            if len(self.diff) > 50:
                lines.append(f"    ... {len(self.diff) - 50} more")
        return "\n".join(lines)
