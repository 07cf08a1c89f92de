"""The jobs a server runs for its control plane (`POST /jobs`, streamed by `mcpsim.serve._jobs`):
N rollouts of a task set with a built-in agent, run by the runner's own episode loop
(`run_episode`) on the server's episodes, one result line per rollout as it finishes, then a
summary line. `mcpsim serve --http` and `serve_on_ray`'s hosts install `ServerJobs` as their
control plane's job runner.

A job names only what the operator allows: the built-in agents (oracle, noop, random,
random:SHARE), and `openai:MODEL` against the endpoint the operator configured (`base_url`, its
key in the variable `api_key_env`), never one the request names: a caller cannot make the server
send requests, or its keys, elsewhere. Its size is bounded (episodes, trials, concurrency, steps,
seconds per episode), and its episodes count against the server's caps like any other."""

from __future__ import annotations

import re
import secrets
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcpsim.runner._agents import make_agent
from mcpsim.runner._backends import InProcessBackend
from mcpsim.runner._run import Job, run_episode
from mcpsim.runner._settings import RolloutSettings, RunConfig
from mcpsim.tasks import Task
from mcpsim.trajectories import Trajectory

if TYPE_CHECKING:
    from mcpsim.serve import EpisodeManager

MAX_JOB_EPISODES = 1000  # rollouts one job may run (tasks x trials)
MAX_JOB_CONCURRENCY = 32
_AGENTS = re.compile(r"oracle|noop|random(:[0-9.]+)?|openai:[\w.:/@-]+")


class JobRequest(BaseModel):
    """The body of POST /jobs."""

    model_config = ConfigDict(extra="forbid")
    world: str | None = Field(None, max_length=64, description="The server's default world if omitted")
    tasks: list[str] | None = Field(None, min_length=1, max_length=MAX_JOB_EPISODES, description="Task ids")
    split: str | None = Field(
        None, max_length=32, description="Without tasks: the tasks of this split (else every task)"
    )
    trials: int = Field(1, ge=1, le=100, strict=True, description="Rollouts of each task")
    agent: str = Field("oracle", max_length=200, description="oracle, noop, random[:SHARE] or openai:MODEL")
    concurrency: int = Field(4, ge=1, le=MAX_JOB_CONCURRENCY, strict=True, description="Rollouts at once")
    max_steps: int = Field(30, ge=1, le=200, strict=True, description="Assistant messages per rollout")
    timeout: float = Field(300.0, gt=0, le=3600, description="Seconds per rollout")
    seed: int = Field(0, ge=0, le=2**31 - 1, strict=True, description="The agents' seed")


@dataclass(frozen=True)
class ServerJobs:
    """A server's job runner (`mcpsim.serve._jobs.JobRunner`). `base_url`: the endpoint
    `openai:MODEL` agents use (None: such agents are refused), its key read from `api_key_env`."""

    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"

    def plan(self, body: Any, manager: EpisodeManager) -> RunConfig:
        """The job `body` asks for, or ValueError (LookupError for an unknown world or task)
        with the reason."""
        if not isinstance(body, dict):
            raise ValueError('a job is a JSON object such as {"world": "retail", "tasks": ["..."], "trials": 4}')
        try:
            spec = JobRequest.model_validate(body)
        except ValidationError as exc:
            reasons = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
            raise ValueError(f"invalid job request: {reasons}") from None
        world = spec.world or (manager.default_world.name if manager.default_world else None)
        if world is None:
            raise ValueError("no world given and this server has no default world")
        if not _AGENTS.fullmatch(spec.agent):
            raise ValueError(
                f"agent {spec.agent!r}: a job's agent is oracle, noop, random, random:SHARE or openai:MODEL"
            )
        if spec.agent.startswith("openai:") and self.base_url is None:
            raise ValueError("openai: agents run against the endpoint the operator configured; this server has none")
        if spec.agent.startswith("random:"):
            make_agent(spec.agent)  # the share checked (ValueError with the reason)
        tasks = _tasks(manager, world, spec)
        if len(tasks) * spec.trials > MAX_JOB_EPISODES:
            raise ValueError(
                f"a job runs at most {MAX_JOB_EPISODES} rollouts; {len(tasks)} tasks x {spec.trials} trials "
                f"is {len(tasks) * spec.trials}"
            )
        return RunConfig(
            world=world,
            tasks=tasks,
            out=Path("."),  # nothing is written: the results go back to the caller
            trials=spec.trials,
            concurrency=spec.concurrency,
            seed=spec.seed,
            max_steps=spec.max_steps,
            timeout=spec.timeout,
            agent=spec.agent,
            base_url=self.base_url or RunConfig.base_url,
            api_key_env=self.api_key_env,
            templates=manager.templates,
        )

    async def run(self, config: RunConfig, manager: EpisodeManager, emit: Any) -> None:
        """The job's rollouts on `manager`'s episodes, `config.concurrency` at a time: a line per
        rollout as it finishes (`result_line`), then the summary (`"done": true`)."""
        backend = InProcessBackend(manager)
        settings = RolloutSettings(
            max_steps=config.max_steps, timeout=config.timeout, run_id=secrets.token_hex(6), seed=config.seed
        )
        limiter, stop = anyio.CapacityLimiter(config.concurrency), anyio.Event()
        finished: list[Trajectory] = []

        async def rollout(task: Task, trial: int) -> None:
            async with limiter:
                job = Job(task, trial, None, settings)
                trajectory, _ = await run_episode(
                    config, job, backend, config.make_agent(), config.make_user(task), stop
                )
            finished.append(trajectory)
            await emit(result_line(trajectory))

        async with anyio.create_task_group() as group:
            for task in config.tasks:
                for trial in range(config.trials):
                    group.start_soon(rollout, task, trial)
        rewards = [t.reward or 0.0 for t in finished]
        await emit(
            {
                "done": True,
                "run_id": settings.run_id,
                "world": config.world,
                "agent": config.agent,
                "episodes": len(finished),
                "passed": sum(1 for r in rewards if r == 1.0),
                "mean_reward": sum(rewards) / len(rewards) if rewards else None,
                "terminations": dict(Counter(t.termination for t in finished)),
            }
        )


def result_line(trajectory: Trajectory) -> dict[str, Any]:
    """What a job streams of one rollout: its task and trial, how it ended, its rewards and state."""
    return {
        "task": trajectory.task_id,
        "trial": trajectory.trial,
        "status": trajectory.status,
        "termination": trajectory.termination,
        "reward": trajectory.reward,
        "partial_reward": trajectory.partial_reward,
        "state_hash": trajectory.state_hash,
        "calls": len(trajectory.calls),
        "error": trajectory.error,
    }


def _tasks(manager: EpisodeManager, world: str, spec: JobRequest) -> list[Task]:
    """The job's tasks: those named (in order), else the split's, else every task of the world."""
    task_set = manager.verifier(manager.worlds(world).name).tasks
    if spec.tasks is not None:
        if spec.split is not None:
            raise ValueError("name tasks or a split, not both")
        return [task_set.get(task_id) for task_id in spec.tasks]
    tasks = [t for t in task_set.tasks if spec.split is None or t.split == spec.split]
    if not tasks:
        splits = sorted({t.split for t in task_set.tasks})
        raise ValueError(f"world {world} has no tasks of split {spec.split!r} (its splits: {', '.join(splits)})")
    return tasks
