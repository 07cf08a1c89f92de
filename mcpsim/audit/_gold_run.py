"""The gold run: the gold steps replayed on a fresh episode and graded with the oracle's
answer, with what is wrong with it; kept for the baselines that start from it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcpsim.audit._verdicts import failed_checks
from mcpsim.engine import Episode
from mcpsim.grading import Verifier
from mcpsim.tasks import GoldActionError, Task, gold_steps, oracle_answer, run_solution, task_episode
from mcpsim.world import World

__all__ = ["GoldRun", "replay_gold"]


@dataclass
class GoldRun:
    """A graded gold replay, kept for the baselines that start from the gold solution."""

    episode: Episode
    conversation: list[dict[str, Any]]
    final: Episode  # a fork of the gold-final state, taken before grading froze it
    reward: float
    state_hash: str

    def close(self) -> None:
        self.episode.close()
        self.final.close()


def replay_gold(
    world: World, verifier: Verifier, task: Task, canaries: set[str], problems: list[str]
) -> GoldRun | None:
    """Replay the gold steps (a confirmation turn included where the rubric wants one) on a
    fresh episode and grade them with the oracle's answer, adding what is wrong to `problems`;
    None if they do not replay."""
    episode = task_episode(world, task, templates=verifier.templates)
    try:
        conversation = run_solution(episode, task, gold_steps(task, world))
    except GoldActionError as exc:
        problems.append(f"the gold solution does not replay: {exc}")
        episode.close()
        return None
    state_hash = episode.state_hash()
    problems += _gold_run_problems(task, episode, canaries)
    final = episode.fork(id="gold-final")
    verdict = verifier.grade(episode, task, oracle_answer(task), conversation)
    if not verdict.passed:
        problems.append("the gold actions do not pass: " + failed_checks(verdict))
    return GoldRun(episode, conversation, final, verdict.reward, state_hash)


def _gold_run_problems(task: Task, episode: Episode, canaries: set[str]) -> list[str]:
    problems = []
    transcript = episode.transcript()
    for number, (action, record) in enumerate(zip(task.gold, transcript, strict=False), 1):
        if action.expect == "error" and not record.fault:
            problems.append(
                f"gold action {number} ({action.tool}) is expected to fail by an injected fault, "
                f"but it failed on its own: {record.error}"
            )
    seen = json.dumps([c.result for c in transcript], default=str)
    if any(canary in seen for canary in canaries):
        problems.append("a tool result of the gold run contains a canary string")
    return problems
