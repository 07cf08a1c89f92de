"""A task's other solutions, run and graded: every alternative must pass and every near miss
must fail."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from mcpsim.audit._verdicts import failed_checks
from mcpsim.engine import FaultProfile, load_profile
from mcpsim.grading import Verifier
from mcpsim.tasks import GoldActionError, Solution, Task, gold_steps, oracle_answer, run_solution, task_episode
from mcpsim.world import World

__all__ = ["SolutionResult", "run_alternative_or_near_miss"]


class SolutionResult(BaseModel):
    """An alternative (must pass) or a near miss (must fail) of a task, as it went."""

    name: str
    kind: Literal["alternative", "near_miss"]
    behaved: bool
    reward: float | None = None
    reason: str = ""


def run_alternative_or_near_miss(
    world: World, verifier: Verifier, task: Task, solution: Solution, kind: Literal["alternative", "near_miss"]
) -> SolutionResult:
    """Run one of the task's other solutions on a fresh episode (with its own fault profile, if
    it has one) and grade it with its conversation and answer: an alternative must pass, a near
    miss must fail. A solution whose steps do not go as written did not behave either."""
    what = "alternative" if kind == "alternative" else "near miss"
    faults: FaultProfile | Literal["task"] | None = "task" if solution.faults is None else load_profile(solution.faults)
    episode = task_episode(world, task, templates=verifier.templates, faults=faults)
    try:
        steps = solution.steps if solution.steps is not None else gold_steps(task, world)
        try:
            conversation = run_solution(episode, task, steps)
        except GoldActionError as exc:
            return SolutionResult(
                name=solution.name,
                kind=kind,
                behaved=False,
                reason=f"the {what} {solution.name!r} does not replay: {exc}",
            )
        answer = solution.answer if solution.answer is not None else oracle_answer(task)
        verdict = verifier.grade(episode, task, answer, conversation)
    finally:
        episode.close()
    if kind == "alternative":
        reason = "" if verdict.passed else f"the alternative {solution.name!r} fails: {failed_checks(verdict)}"
        return SolutionResult(
            name=solution.name, kind=kind, behaved=verdict.passed, reward=verdict.reward, reason=reason
        )
    reason = f"the near miss {solution.name!r} passes" if verdict.passed else ""
    return SolutionResult(
        name=solution.name, kind=kind, behaved=not verdict.passed, reward=verdict.reward, reason=reason
    )
