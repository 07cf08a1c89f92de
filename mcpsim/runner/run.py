"""Many rollouts: bounded concurrency, one fsynced journal line per finished episode, --resume,
and --keep-first (stop once M episodes are done; snapshot the rest for a later run)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import structlog

from mcpsim.engine.faults import FaultProfile
from mcpsim.runner.agents import Agent
from mcpsim.runner.backends import Backend, BackendError, GradingFailed
from mcpsim.runner.loop import Resume, RolloutSettings, rollout
from mcpsim.runner.metrics import Summary, latest, summarize
from mcpsim.runner.users import User
from mcpsim.tasks import Task
from mcpsim.trajectories.journal import Journal, JournalError
from mcpsim.trajectories.schema import Trajectory

log = structlog.get_logger("mcpsim.runner")


class RunError(RuntimeError):
    pass


# Why an episode can end without telling anything about the agent: the model endpoint, the world
# server or the grader failed, or the episode ran out of time. `mcpsim run --max-failures` bounds them.
INFRASTRUCTURE_FAILURES = frozenset({"model_error", "server_error", "grader_error", "timeout"})


@dataclass
class RunConfig:
    world: str
    tasks: list[Task]
    out: Path
    trials: int = 1
    concurrency: int = 8
    seed: int = 0
    resume: bool = False
    keep_first: int | None = None
    faults: FaultProfile | None = None  # for every episode; None: each task's own profile
    settings: RolloutSettings = field(default_factory=RolloutSettings)


@dataclass
class RunResult:
    summary: Summary
    ran: int  # episodes finished in this run
    skipped: int  # already finished in an earlier run
    cancelled: int  # suspended by --keep-first in this run
    not_started: int  # never launched because --keep-first was reached first
    failures: dict[str, int] = field(default_factory=dict)  # this run's episodes per infrastructure failure
    failure_examples: list[str] = field(default_factory=list)  # the first few of them, with their errors


async def run_episodes(
    config: RunConfig,
    backend: Backend,
    make_agent: Callable[[], Agent],
    make_user: Callable[[Task], User],
    *,
    on_progress: Callable[[Trajectory], None] | None = None,
) -> RunResult:
    journal = Journal(config.out)  # drops a line torn by a crash
    previous = latest(_read(journal))
    if previous and not config.resume:
        raise RunError(
            f"{journal.path} already holds {len(previous)} episodes: pass --resume to finish the run, "
            "or choose another --out"
        )
    partial_dir = config.out / "partial"
    run_id = secrets.token_hex(6)
    settings = RolloutSettings(
        max_steps=config.settings.max_steps, timeout=config.settings.timeout, run_id=run_id, seed=config.seed
    )
    jobs: list[tuple[Task, int, Trajectory | None]] = []
    skipped = 0
    for task in config.tasks:
        for trial in range(config.trials):
            before = previous.get(f"{task.id}#{trial}")
            if before is not None and before.status == "completed":
                skipped += 1
                continue
            jobs.append((task, trial, before if before is not None and before.status == "cancelled" else None))

    stop = anyio.Event()
    limiter = anyio.CapacityLimiter(config.concurrency)
    counts = {"ran": 0, "cancelled": 0, "not_started": 0}
    failures: dict[str, int] = {}
    failure_examples: list[str] = []

    async def job(task: Task, trial: int, cancelled: Trajectory | None) -> None:
        async with limiter:
            if stop.is_set():
                counts["not_started"] += 1
                return
            resume = None
            if cancelled is not None and cancelled.snapshot and await anyio.Path(cancelled.snapshot).exists():
                resume = Resume(
                    cancelled.messages,
                    cancelled.calls,
                    cancelled.usage,
                    await anyio.Path(cancelled.snapshot).read_bytes(),
                )
            agent, user = make_agent(), make_user(task)
            try:
                async with backend.episode(
                    config.world, task, resume.snapshot if resume else None, config.faults
                ) as live:
                    trajectory, snapshot = await rollout(
                        agent,
                        live,
                        task,
                        user,
                        world=config.world,
                        trial=trial,
                        settings=settings,
                        stop=stop,
                        resume=resume,
                    )
            except (BackendError, OSError) as exc:
                trajectory, snapshot = _failed(config.world, task, trial, agent.name, run_id, exc), None
            except Exception as exc:  # the MCP client or server failed: record it, keep running the rest
                if isinstance(exc, anyio.get_cancelled_exc_class()):
                    raise
                log.exception("episode failed", task=task.id, trial=trial)
                trajectory, snapshot = _failed(config.world, task, trial, agent.name, run_id, exc), None
            finally:
                await agent.aclose()
                await user.aclose()
            if snapshot is not None:
                partial_dir.mkdir(parents=True, exist_ok=True)
                path = partial_dir / f"{task.id}#{trial}.sqlite"
                path.write_bytes(snapshot)
                trajectory.snapshot = str(path)
                counts["cancelled"] += 1
            else:
                counts["ran"] += 1
                if trajectory.termination in INFRASTRUCTURE_FAILURES:
                    failures[trajectory.termination] = failures.get(trajectory.termination, 0) + 1
                    if len(failure_examples) < 3:
                        failure_examples.append(f"{task.id}#{trial} {trajectory.termination}: {trajectory.error}")
                if config.keep_first is not None and counts["ran"] >= config.keep_first:
                    stop.set()
            await anyio.to_thread.run_sync(journal.append, trajectory)  # fsynced before progress is shown
            if on_progress is not None:
                on_progress(trajectory)

    async with anyio.create_task_group() as tg:
        for task, trial, cancelled in jobs:
            tg.start_soon(job, task, trial, cancelled)
    return RunResult(
        summarize(_read(journal)),
        counts["ran"],
        skipped,
        counts["cancelled"],
        counts["not_started"],
        failures,
        failure_examples,
    )


def _read(journal: Journal) -> list[Trajectory]:
    try:
        return journal.read()
    except JournalError as exc:
        raise RunError(str(exc)) from None


def _failed(world: str, task: Task, trial: int, agent: str, run_id: str, exc: BaseException) -> Trajectory:
    grading = _leaf(exc, GradingFailed)
    cause = exc if grading is None else grading
    # a grading failure has no verdict: the episode has no reward, not a reward of 0
    reward = 0.0 if grading is None else None
    return Trajectory(
        run_id=run_id,
        world=world,
        world_version="",
        task_id=task.id,
        trial=trial,
        agent=agent,
        status="error",
        termination="server_error" if grading is None else "grader_error",
        error=f"{type(cause).__name__}: {cause}",
        reward=reward,
        partial_reward=reward,
    )


def _leaf(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """`exc` itself if of `kind`, or the first such exception inside (task groups wrap them)."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _leaf(inner, kind)) is not None:
                return found
    return None
