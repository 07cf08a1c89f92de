"""Many rollouts: bounded concurrency, one fsynced journal line per finished episode, --resume,
and --keep-first (stop once M episodes are done; snapshot the rest for a later run)."""

from __future__ import annotations

import gc
import secrets
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import structlog

from mcpsim.runner._agents import Agent
from mcpsim.runner._backends import Backend, BackendError, GradingFailed
from mcpsim.runner._loop import Resume, rollout
from mcpsim.runner._settings import RolloutSettings, RunConfig
from mcpsim.runner._summary import Summary, latest, summarize
from mcpsim.runner._users import ServerUser, User
from mcpsim.tasks import Task
from mcpsim.trajectories import Journal, JournalError, Trajectory

log = structlog.get_logger("mcpsim.runner")


__all__ = ["INFRASTRUCTURE_FAILURES", "Job", "RunConfig", "RunError", "RunResult", "run_episode", "run_episodes"]


class RunError(RuntimeError):
    pass


# Why an episode can end without telling anything about the agent: the model endpoint, the world
# server or the grader failed, or the episode ran out of time. `mcpsim run --max-failures` bounds them.
INFRASTRUCTURE_FAILURES = frozenset({"model_error", "server_error", "grader_error", "timeout"})


@dataclass
class RunResult:
    summary: Summary
    ran: int  # episodes finished in this run
    skipped: int  # already finished in an earlier run
    cancelled: int  # suspended by --keep-first in this run
    not_started: int  # never launched because --keep-first was reached first
    failures: dict[str, int] = field(default_factory=dict)  # this run's episodes per infrastructure failure
    failure_examples: list[str] = field(default_factory=list)  # the first few of them, with their errors
    reruns: int = 0  # episodes started again elsewhere after their Ray worker died


@dataclass(frozen=True)
class Job:
    """One episode to run: a task's trial, resumed from `resume` when an earlier run suspended it."""

    task: Task
    trial: int
    resume: Resume | None
    settings: RolloutSettings


# Runs one job to its end: the trajectory, and the snapshot of a suspended episode.
EpisodeRunner = Callable[[Job, anyio.Event], Awaitable[tuple[Trajectory, bytes | None]]]


async def run_episode(
    config: RunConfig, job: Job, backend: Backend, agent: Agent, user: User, stop: anyio.Event
) -> tuple[Trajectory, bytes | None]:
    """One episode of `config`'s world on `backend`, whatever becomes of it: a failure of the
    backend, the MCP client or the server is recorded as the episode's (`server_error`,
    `grader_error`), not raised."""
    world, task, trial = config.world, job.task, job.trial
    try:
        snapshot = job.resume.snapshot if job.resume else None
        async with backend.episode(world, task, snapshot, config.faults) as live:
            if isinstance(user, ServerUser):  # its replies come from this episode's server
                user.episode = live
            return await rollout(
                agent, live, task, user, world=world, trial=trial, settings=job.settings, stop=stop, resume=job.resume
            )
    except (BackendError, OSError) as exc:
        return failed_trajectory(world, task, trial, agent.name, job.settings.run_id, exc), None
    except Exception as exc:  # the MCP client or server failed: record it, keep running the rest
        if isinstance(exc, anyio.get_cancelled_exc_class()):
            raise
        log.exception("episode failed", task=task.id, trial=trial)
        return failed_trajectory(world, task, trial, agent.name, job.settings.run_id, exc), None
    finally:
        await agent.aclose()
        await user.aclose()


async def run_episodes(
    config: RunConfig,
    backend: Backend,
    make_agent: Callable[[], Agent],
    make_user: Callable[[Task], User],
    *,
    on_progress: Callable[[Trajectory], None] | None = None,
) -> RunResult:
    """Run `config`'s episodes in this process on `backend`."""

    async def local(job: Job, stop: anyio.Event) -> tuple[Trajectory, bytes | None]:
        return await run_episode(config, job, backend, make_agent(), make_user(job.task), stop)

    return await schedule(config, local, on_progress=on_progress)


async def schedule(
    config: RunConfig,
    runner: EpisodeRunner,
    *,
    on_progress: Callable[[Trajectory], None] | None = None,
    reruns: Callable[[], int] = lambda: 0,
) -> RunResult:
    """The run's bookkeeping, whoever runs the episodes (`runner`: in this process, or on a Ray
    cluster): the journal (one fsynced line per finished episode, in the order they finish),
    --resume, --keep-first and at most `config.concurrency` episodes at once."""
    journal = Journal(config.out)  # drops a line torn by a crash
    # The journal's lines, kept as they are written (the summary is made from them, not re-read)
    records = _read(journal)
    previous = latest(records)
    if previous and not config.resume:
        raise RunError(
            f"{journal.path} already holds {len(previous)} episodes: pass --resume to finish the run, "
            "or choose another --out"
        )
    partial_dir = config.out / "partial"
    settings = RolloutSettings(
        max_steps=config.max_steps, timeout=config.timeout, run_id=secrets.token_hex(6), seed=config.seed
    )
    jobs, skipped = _pending(config, previous)

    stop = anyio.Event()
    limiter = anyio.CapacityLimiter(config.concurrency)
    counts = {"ran": 0, "cancelled": 0, "not_started": 0}
    failures: dict[str, int] = {}
    failure_examples: list[str] = []

    written = threading.Lock()

    def write(trajectory: Trajectory) -> None:
        with written:  # the records in the journal's order
            journal.append(trajectory)
            records.append(trajectory)

    async def job(task: Task, trial: int, cancelled: Trajectory | None) -> None:
        async with limiter:
            if stop.is_set():
                counts["not_started"] += 1
                return
            resume = await _resume_of(cancelled)
            trajectory, snapshot = await runner(Job(task, trial, resume, settings), stop)
            if snapshot is not None:
                trajectory.snapshot = _keep_snapshot(partial_dir, task, trial, snapshot)
                counts["cancelled"] += 1
            else:
                counts["ran"] += 1
                if trajectory.termination in INFRASTRUCTURE_FAILURES:
                    failures[trajectory.termination] = failures.get(trajectory.termination, 0) + 1
                    if len(failure_examples) < 3:
                        failure_examples.append(f"{task.id}#{trial} {trajectory.termination}: {trajectory.error}")
                if config.keep_first is not None and counts["ran"] >= config.keep_first:
                    stop.set()
            await anyio.to_thread.run_sync(write, trajectory)  # fsynced before progress is shown
            if on_progress is not None:
                on_progress(trajectory)

    with _frozen_heap():
        async with anyio.create_task_group() as tg:
            for task, trial, cancelled in jobs:
                tg.start_soon(job, task, trial, cancelled)
    return RunResult(
        summarize(records),
        counts["ran"],
        skipped,
        counts["cancelled"],
        counts["not_started"],
        failures,
        failure_examples,
        reruns(),
    )


def _pending(
    config: RunConfig, previous: dict[str, Trajectory]
) -> tuple[list[tuple[Task, int, Trajectory | None]], int]:
    """The run's episodes still to run (each with its cancelled trajectory, to resume from, if an
    earlier run suspended it), and how many an earlier run finished (skipped)."""
    jobs: list[tuple[Task, int, Trajectory | None]] = []
    skipped = 0
    for task in config.tasks:
        for trial in range(config.trials):
            before = previous.get(f"{task.id}#{trial}")
            if before is not None and before.status == "completed":
                skipped += 1
                continue
            jobs.append((task, trial, before if before is not None and before.status == "cancelled" else None))
    return jobs, skipped


async def _resume_of(cancelled: Trajectory | None) -> Resume | None:
    """Where a suspended episode stopped, if its snapshot is still there."""
    resume = None
    if cancelled is not None and cancelled.snapshot and await anyio.Path(cancelled.snapshot).exists():
        resume = Resume(
            cancelled.messages,
            cancelled.calls,
            cancelled.usage,
            await anyio.Path(cancelled.snapshot).read_bytes(),
        )
    return resume


def _keep_snapshot(partial_dir: Path, task: Task, trial: int, snapshot: bytes) -> str:
    """Write a suspended episode's snapshot under `partial_dir`; its path."""
    partial_dir.mkdir(parents=True, exist_ok=True)
    path = partial_dir / f"{task.id}#{trial}.sqlite"
    path.write_bytes(snapshot)
    return str(path)


RUN_GC_THRESHOLD0 = 20_000  # the collector's first threshold while runs are in progress (CPython's default: 700)
_RUNS: dict[str, Any] = {"active": 0, "froze": False, "threshold": None}  # runs in progress here (they may overlap)
_RUNS_LOCK = threading.Lock()


@contextmanager
def _frozen_heap() -> Iterator[None]:
    """While runs are in progress, the objects that were alive when the first began (modules,
    worlds, templates, tasks: most of the process's heap) are left out of garbage collection
    (`gc.freeze`); when the last ends they are handed back (`gc.unfreeze`), so whatever of them
    became garbage is collected as usual. Each of the collector's full collections walks every
    tracked object: with the whole heap that was about 2 ms per episode at concurrency 64, where
    a run's episodes keep enough objects alive to trigger them. A process that froze its heap
    itself (a trainer before it forks its workers) keeps its own freeze: the runs then neither
    freeze nor unfreeze.

    The collector's first threshold is raised to RUN_GC_THRESHOLD0 meanwhile (a young
    collection every 20,000 net allocations, not every 700): an episode allocates thousands of
    short-lived container objects (requests, results, rows), and with hundreds of episodes in
    flight each young collection walks all of theirs. It is put back when the last run ends,
    unless the process changed it meanwhile; a process that set a higher one, or turned automatic
    collection off (a threshold of 0), keeps it."""
    with _RUNS_LOCK:
        _RUNS["active"] += 1
        if _RUNS["active"] == 1:
            _RUNS["froze"] = gc.get_freeze_count() == 0
            if _RUNS["froze"]:
                gc.freeze()
            before = gc.get_threshold()
            _RUNS["threshold"] = None
            if 0 < before[0] < RUN_GC_THRESHOLD0:  # 0: the host turned automatic collection off
                gc.set_threshold(RUN_GC_THRESHOLD0, *before[1:])
                _RUNS["threshold"] = before
    try:
        yield
    finally:
        with _RUNS_LOCK:
            _RUNS["active"] -= 1
            if _RUNS["active"] == 0:
                if _RUNS["froze"]:
                    gc.unfreeze()
                before = _RUNS["threshold"]
                if before is not None and gc.get_threshold() == (RUN_GC_THRESHOLD0, *before[1:]):
                    gc.set_threshold(*before)


def _read(journal: Journal) -> list[Trajectory]:
    try:
        return journal.read()
    except JournalError as exc:
        raise RunError(str(exc)) from None


def failed_trajectory(
    world: str, task: Task, trial: int, agent: str, run_id: str | None, exc: BaseException
) -> Trajectory:
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
