"""Partial reward that means progress, and the check every task gets without asking for it.

- **Reward components.** Each check of a verdict is a named component, `"<position from 1>:<type>"`
  (the names of `VerdictSummary.checks`): 1.0 passed, 0.0 not.
- **What a do-nothing agent gets carries no weight.** A check that a do-nothing agent passes on a
  task (no call, and no answer or a bland one: `BLAND_ANSWERS`) says nothing about progress: a
  read-only task's `allowed_changes`, a refusal's `tool_not_called`, a confirmation before writes
  never made. Such a check is a guard: it adds nothing to the partial reward, but failing it
  scales the reward down (`partial_reward`), so a do-nothing agent's partial reward is 0 on every
  task and only a passing verdict earns 1. Which checks those are
  is worked out once per task per process by grading a do-nothing episode of the task
  (`Verifier.noop_passes`), not read from the `noop_passes` labels (which `mcpsim check` holds to
  the same run; they are the fallback when that grading fails).
- **An answer needs a call.** A task whose gold solution makes a call that succeeds fails an
  episode in which no call took effect (`calls_check`): a final answer given without a single
  call is a guess, however right, and so is a refusal made without looking."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from mcpsim.engine import CallRecord
from mcpsim.grading._verdict import CheckResult
from mcpsim.tasks import Task

__all__ = [
    "BLAND_ANSWERS",
    "CALLS_CHECK",
    "calls_check",
    "component_names",
    "partial_reward",
]

BLAND_ANSWERS: tuple[str | None, ...] = (
    None,
    "Done.",
    "I have looked into it; everything is in order.",
    "I'm sorry, I can't help with that.",
)
"""What a do-nothing agent may answer: nothing, a claim of success, a reassurance, a refusal."""

CALLS_CHECK = "calls_made"


def calls_check(task: Task, transcript: Sequence[CallRecord]) -> CheckResult | None:
    """The derived check that an episode made a call that took effect, for a task whose gold
    solution makes one (None for a task whose gold solution makes no call: a refusal on the
    instruction alone needs none)."""
    needed = sum(a.expect == "ok" for a in task.gold)
    if not needed:
        return None
    made = sum(c.call_seq is not None for c in transcript)
    return CheckResult(
        type=CALLS_CHECK,
        requirement=f"The agent made a call that took effect (the gold solution makes {needed})",
        weight=1.0,
        noop_passes=False,
        passed=made > 0,
        reason=f"{made} call(s) took effect" if made else "no call took effect: the answer was given without a look",
    )


def component_names(checks: Sequence[CheckResult]) -> list[str]:
    """Each check's component name: its position (from 1) and type, as in the verdict's summary."""
    return [f"{i}:{c.type}" for i, c in enumerate(checks, 1)]


def _share(checks: Sequence[CheckResult]) -> float:
    total = sum(c.weight for c in checks)
    return sum(c.weight for c in checks if c.passed) / total if total else float(all(c.passed for c in checks))


def partial_reward(checks: Sequence[CheckResult], noop_passed: Collection[str]) -> float:
    """Progress times care: the weighted share of the checks a do-nothing agent fails that passed,
    times the weighted share of the checks it passes (`noop_passed`, by component name: the
    guards, such as nothing else changed or a confirmation before a write) that passed. So a
    do-nothing agent earns 0, breaking a guard costs, and only a verdict that passes every check
    earns 1. With no check a do-nothing agent fails (a broken task), progress is 0."""
    if not checks:
        return 0.0
    named = list(zip(component_names(checks), checks, strict=True))
    progress = [c for n, c in named if n not in noop_passed]
    guards = [c for n, c in named if n in noop_passed]
    if not progress:
        return 0.0
    return round(_share(progress) * _share(guards), 6)
