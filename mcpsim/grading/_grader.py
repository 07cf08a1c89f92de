"""Grading an episode against its task. Fails closed: an empty rubric, an episode of another
world version or task, a simulator bug during the episode, a gold solution that does not replay,
a verifier error or grading that exceeds its work budget all give reward 0 with the reason.

A verdict never depends on how busy the machine is. Grading is bounded by work, not by the wall
clock: SQLite virtual-machine steps (counted by a progress handler) and the grading thread's CPU
time. Both are properties of the episode and the task, so the same episode gets the same verdict
on an idle machine and at concurrency 64. The wall clock only guards against a grader that makes
no progress at all (a hung custom check): past `stall_timeout` grading raises `GradingUnavailable`,
an infrastructure error the caller retries; it is never a reward."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable
from typing import Any

import structlog

from mcpsim.engine import Episode, NetChanges, TemplateCache, process_templates
from mcpsim.grading import _answers as answers
from mcpsim.grading._check_ids import with_ids
from mcpsim.grading._checks import GradingContext, evaluate
from mcpsim.grading._diff import diff_entries
from mcpsim.grading._effects import episode_changes
from mcpsim.grading._progress import BLAND_ANSWERS, calls_check, component_names, partial_reward
from mcpsim.grading._report import report_check
from mcpsim.grading._roles import attributed, role_checks
from mcpsim.grading._verdict import CheckResult, Verdict, VerdictSummary
from mcpsim.tasks import Task, TaskSet, run_actions, task_episode
from mcpsim.world import World, billing

# inflect is imported lazily by `answers` (a served episode never grades), but graders run in
# worker threads, and its import swaps typeguard's decorator for a moment (`mcpsim._inflect`):
# load it here, when the grader itself is imported, not from a grading thread.
answers.inflection_engine()

log = structlog.get_logger("mcpsim.grading")


SQLITE_STEP_BUDGET = 2_000_000_000  # SQLite VM instructions per grading (a retail grade uses well under 1%)
CPU_BUDGET_S = 60.0  # CPU seconds of the grading thread
STALL_TIMEOUT_S = 600.0  # wall-clock seconds before grading counts as stalled (an infrastructure error)
# a result repeats its check's type, text, weight (its id comes from `_check_ids`)
_FROM_CHECK = set(CheckResult.model_fields) - {"id", "passed", "reason", "roles"}
_PROGRESS_EVERY = 10_000  # SQLite instructions between two progress-handler calls


class WorkBudgetExceeded(Exception):
    """The checks needed more work than the budget allows: deterministic, so a failed grade."""


class GradingUnavailable(RuntimeError):
    """Grading could not finish for a reason outside the episode (it stalled). Not a verdict:
    retry it."""


class Verifier:
    """Grades episodes of one world's tasks. The gold solution of each task is replayed once
    per process (on a fresh episode of the task) and its net changes cached."""

    def __init__(
        self,
        world: World,
        tasks: TaskSet,
        *,
        templates: TemplateCache | None = None,
        stall_timeout: float = STALL_TIMEOUT_S,
        sqlite_steps: int = SQLITE_STEP_BUDGET,
        cpu_seconds: float = CPU_BUDGET_S,
    ) -> None:
        self.world = world
        self.tasks = tasks
        self.templates = templates or process_templates()
        self.stall_timeout = stall_timeout
        self.sqlite_steps = sqlite_steps
        self.cpu_seconds = cpu_seconds
        self._gold: dict[str, NetChanges] = {}
        self._gold_lock = threading.Lock()
        self._noop: dict[str, frozenset[str]] = {}
        self._noop_lock = threading.Lock()

    def gold_changes(self, task: Task) -> NetChanges:
        with self._gold_lock:
            if task.id not in self._gold:
                episode = task_episode(self.world, task, templates=self.templates)
                try:
                    run_actions(episode, task.gold)
                    if episode.flagged:
                        raise RuntimeError(f"gold replay hit a simulator bug: {episode.flags[0]}")
                    self._gold[task.id] = episode_changes(episode)
                finally:
                    episode.close()
            return self._gold[task.id]

    def noop_passes(self, task: Task) -> frozenset[str]:
        """The components (`"<position>:<type>"`) a do-nothing agent passes on `task`: a fresh
        episode of the task, no call, graded with each of `BLAND_ANSWERS`; worked out once per
        task per process. They carry no weight in the partial reward."""
        with self._noop_lock:
            if task.id not in self._noop:
                episode = task_episode(self.world, task, templates=self.templates)
                try:
                    episode.end()
                    changes = episode_changes(episode)
                    passed: set[str] = set()
                    for answer in BLAND_ANSWERS:
                        said = [] if answer is None else [{"role": "assistant", "content": answer}]
                        conversation = [{"role": "user", "content": task.instruction}, *said]
                        checks = self._run_checks(episode, task, answer, changes, conversation)
                        passed |= {n for n, c in zip(component_names(checks), checks, strict=True) if c.passed}
                finally:
                    episode.close()
                self._noop[task.id] = frozenset(passed)
            return self._noop[task.id]

    def _noop_or_labels(self, task: Task, checks: list[CheckResult]) -> frozenset[str]:
        try:
            return self.noop_passes(task)
        except GradingUnavailable:
            raise
        except Exception:  # the labels, which `mcpsim check` holds to the same run
            log.exception("grading a do-nothing episode failed; partial reward falls back to the labels", task=task.id)
            return frozenset(n for n, c in zip(component_names(checks), checks, strict=True) if c.noop_passes)

    def grade(
        self,
        episode: Episode,
        task: Task | str,
        answer: str | None = None,
        conversation: list[dict[str, Any]] | None = None,
        stored: Callable[[Verdict], Verdict | VerdictSummary] | None = None,
    ) -> Verdict:
        """End the episode (later writes are refused) and grade its frozen state. `answer` is the
        agent's final answer; `conversation` (OpenAI-style messages), when given, lets checks
        on the dialogue (a confirmation before a write) see it."""
        task = self.tasks.get(task) if isinstance(task, str) else task
        episode.end()
        failure = self._refusal(episode, task)
        checks: list[CheckResult] = []
        diff = []
        try:
            changes = episode_changes(episode)
            diff = diff_entries(changes)
            if task.rubric:
                checks = self._run_checks(episode, task, answer, changes, conversation)
        except WorkBudgetExceeded as exc:
            failure = failure or f"grading exceeded its work budget: {exc}"
        except GradingUnavailable:
            raise
        except Exception as exc:  # fail closed, and say why
            log.exception("verifier error", task=task.id, episode=episode.id)
            failure = failure or f"verifier error: {type(exc).__name__}: {exc}"
        noop = self._noop_or_labels(task, checks) if checks and failure is None else frozenset()
        passed = failure is None and bool(checks) and all(c.passed for c in checks)
        verdict = Verdict(
            task_id=task.id,
            world=self.world.name,
            world_version=self.world.version,
            episode_id=episode.id,
            passed=passed,
            reward=1.0 if passed else 0.0,
            partial_reward=0.0 if failure else partial_reward(checks, noop),
            failure=failure,
            checks=checks,
            diff=diff,
            answer=answer,
            calls=episode.calls,
            state_hash=episode.state_hash(),
            components={n: float(c.passed) for n, c in zip(component_names(checks), checks, strict=True)},
            guards=[n for n in component_names(checks) if n in noop],
            spend=billing.statement(episode.world, episode.query) or {},
        )
        kept = stored(verdict) if stored is not None else verdict  # what the episode keeps (e.g. `Verdict.summary`)
        episode.verdict = kept.model_dump(mode="json")
        return verdict

    def _refusal(self, episode: Episode, task: Task) -> str | None:
        """A reason to fail closed that needs no checks, or None."""
        if not task.rubric:
            return "the rubric is empty: nothing is checked, so nothing passes"
        if episode.world.name != self.world.name:
            return f"the episode is of world {episode.world.name!r}, the task of {self.world.name!r}"
        if episode.template_version != self.world.version:
            return (
                f"world version mismatch: the episode was built from version {episode.template_version}, "
                f"the verifier's world is version {self.world.version}"
            )
        if episode.task_id != task.id:
            return f"the episode was created for task {episode.task_id!r}, not {task.id!r}"
        if episode.flagged:
            return f"a simulator bug happened during the episode ({episode.flags[0]}); it cannot be graded as a pass"
        return None

    def _run_checks(
        self,
        episode: Episode,
        task: Task,
        answer: str | None,
        changes: NetChanges,
        conversation: list[dict[str, Any]] | None,
    ) -> list[CheckResult]:
        ctx = GradingContext(
            task=task,
            episode=episode,
            answer=answer,
            transcript=episode.transcript(),
            changes=changes,
            volatile=self.tasks.volatile_for(task),
            gold_changes=lambda: self.gold_changes(task),
            conversation=conversation,
            free_text=self.tasks.free_text_for(task),
        )
        cancelled = threading.Event()
        budget = _Budget(self.sqlite_steps, self.cpu_seconds)

        def run() -> list[CheckResult]:
            budget.start()
            results = []
            for check in task.rubric:
                passed, reason = evaluate(ctx, check)
                budget.check()
                results.append(CheckResult(**check.model_dump(include=_FROM_CHECK), passed=passed, reason=reason))
            derived = [calls_check(task, ctx.transcript), report_check(episode, ctx.transcript, answer)]
            if task.roles:  # a team task: each check's roles, then one check per role
                by_seq = episode.meta().roles
                results = attributed(task, ctx, by_seq, results, [d for d in derived if d is not None])
                return with_ids([*results, *role_checks(task, ctx.transcript, by_seq)], task.rubric)
            return with_ids([*results, *(d for d in derived if d is not None)], task.rubric)

        def progress() -> int:  # runs in the grading thread, inside SQLite
            return 1 if cancelled.is_set() or budget.step() else 0

        episode.set_progress_handler(progress, _PROGRESS_EVERY)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcpsim-verify")
        future = pool.submit(run)
        try:
            return future.result(timeout=self.stall_timeout)
        except concurrent.futures.TimeoutError:
            cancelled.set()
            log.error("grading stalled", task=task.id, episode=episode.id, seconds=self.stall_timeout)
            raise GradingUnavailable(f"grading made no progress for {self.stall_timeout:g} s; retry it") from None
        except Exception as exc:
            if budget.exceeded:  # SQLite's "interrupted" error, or the check after a check
                raise WorkBudgetExceeded(budget.exceeded) from exc
            raise
        finally:
            pool.shutdown(wait=False)
            if not cancelled.is_set():
                episode.set_progress_handler(None, 0)


class _Budget:
    """The work one grading may do: SQLite VM instructions and the grading thread's CPU time."""

    def __init__(self, sqlite_steps: int, cpu_seconds: float) -> None:
        self.sqlite_steps, self.cpu_seconds = sqlite_steps, cpu_seconds
        self.steps = 0
        self.cpu_start = 0.0
        self.exceeded: str | None = None

    def start(self) -> None:
        self.cpu_start = time.thread_time()

    def step(self) -> bool:
        """One progress-handler call; True aborts the running statement."""
        self.steps += _PROGRESS_EVERY
        if self.steps > self.sqlite_steps:
            self.exceeded = f"more than {self.sqlite_steps:,} SQLite steps"
        elif self.steps % (100 * _PROGRESS_EVERY) == 0:
            self._cpu()
        return self.exceeded is not None

    def check(self) -> None:
        """Between two checks."""
        self._cpu()
        if self.exceeded:
            raise WorkBudgetExceeded(self.exceeded)

    def _cpu(self) -> None:
        used = time.thread_time() - self.cpu_start
        if used > self.cpu_seconds and not self.exceeded:
            self.exceeded = f"more than {self.cpu_seconds:g} s of CPU time"
