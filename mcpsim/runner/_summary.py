"""Run summaries: pass@1, pass^k (every one of k trials passes), rewards, calls, tokens, errors."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel

from mcpsim.grading import mean, pass_at_1, pass_hat_k
from mcpsim.trajectories import Trajectory


class TaskStats(BaseModel):
    task_id: str
    trials: int
    passes: int
    mean_reward: float
    mean_partial: float
    tool_calls: int
    tool_errors: int
    tokens: int
    terminations: dict[str, int]


class Summary(BaseModel):
    world: str | None
    agents: list[str]
    episodes: int  # finished (completed or errored) episodes the scores are over
    cancelled: int  # suspended by --keep-first, waiting for a resume
    errors: int
    pass_at_1: float
    pass_hat_k: dict[int, float]  # k -> mean over tasks of C(passes, k) / C(trials, k)
    mean_reward: float
    mean_partial: float
    tool_calls: int
    tool_errors: int
    tokens: int
    tasks: list[TaskStats]


def latest(trajectories: list[Trajectory]) -> dict[str, Trajectory]:
    """The last line per (task, trial): a resumed episode's completion replaces its cancellation."""
    out: dict[str, Trajectory] = {}
    for t in trajectories:
        out[t.key] = t
    return out


def summarize(trajectories: list[Trajectory]) -> Summary:
    current = list(latest(trajectories).values())
    finished = [t for t in current if t.status != "cancelled"]
    by_task: dict[str, list[Trajectory]] = {}
    for t in finished:
        by_task.setdefault(t.task_id or "?", []).append(t)
    stats = []
    for task_id, runs in sorted(by_task.items()):
        stats.append(
            TaskStats(
                task_id=task_id,
                trials=len(runs),
                passes=sum(1 for r in runs if r.reward == 1.0),
                mean_reward=mean([r.reward or 0.0 for r in runs]),
                mean_partial=mean([r.partial_reward or 0.0 for r in runs]),
                tool_calls=sum(len(r.calls) for r in runs),
                tool_errors=sum(1 for r in runs for c in r.calls if not c.ok),
                tokens=sum(r.usage.total_tokens for r in runs),
                terminations=dict(Counter(r.termination for r in runs)),
            )
        )
    outcomes = [(s.passes, s.trials) for s in stats]
    return Summary(
        world=current[0].world if current else None,
        agents=sorted({t.agent for t in current}),
        episodes=len(finished),
        cancelled=sum(1 for t in current if t.status == "cancelled"),
        errors=sum(1 for t in finished if t.status == "error"),
        pass_at_1=pass_at_1(outcomes),
        pass_hat_k=pass_hat_k(outcomes),
        mean_reward=mean([t.reward or 0.0 for t in finished]),
        mean_partial=mean([t.partial_reward or 0.0 for t in finished]),
        tool_calls=sum(s.tool_calls for s in stats),
        tool_errors=sum(s.tool_errors for s in stats),
        tokens=sum(s.tokens for s in stats),
        tasks=stats,
    )
