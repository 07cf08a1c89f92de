"""Grading an episode against its task. Fails closed: an empty rubric, an episode of another
world version or task, a simulator bug during the episode, a gold solution that does not replay,
a verifier error or a timeout all give reward 0 with the reason."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from typing import Any

import structlog

from mcpsim.episode import Episode
from mcpsim.scenario import run_actions, task_episode
from mcpsim.tasks import Task, TaskSet
from mcpsim.templates import TemplateCache, process_templates
from mcpsim.verifier.checks import GradingContext, evaluate
from mcpsim.verifier.diff import NetChanges, diff_entries, net_changes
from mcpsim.verifier.verdict import CheckResult, Verdict
from mcpsim.world import World

log = structlog.get_logger("mcpsim.verifier")


class VerifierTimeout(Exception):
    pass


class Verifier:
    """Grades episodes of one world's tasks. The gold solution of each task is replayed once
    per process (on a fresh episode of the task) and its net changes cached."""

    def __init__(self, world: World, tasks: TaskSet, *, templates: TemplateCache | None = None,
                 timeout: float = 30.0) -> None:
        self.world = world
        self.tasks = tasks
        self.templates = templates or process_templates()
        self.timeout = timeout
        self._gold: dict[str, NetChanges] = {}
        self._gold_lock = threading.Lock()

    def gold_changes(self, task: Task) -> NetChanges:
        with self._gold_lock:
            if task.id not in self._gold:
                episode = task_episode(self.world, task, templates=self.templates)
                try:
                    run_actions(episode, task.gold)
                    if episode.flagged:
                        raise RuntimeError(f"gold replay hit a simulator bug: {episode.flags[0]}")
                    self._gold[task.id] = net_changes(episode.changes())
                finally:
                    episode.close()
            return self._gold[task.id]

    def grade(self, episode: Episode, task: Task | str, answer: str | None = None,
              conversation: list[dict[str, Any]] | None = None) -> Verdict:
        """End the episode (later writes are refused) and grade its frozen state. `answer` is the
        agent's final answer; `conversation` (OpenAI-style messages), when given, lets checks
        on the dialogue (a confirmation before a write) see it."""
        task = self.tasks.get(task) if isinstance(task, str) else task
        episode.end()
        failure = self._refusal(episode, task)
        checks: list[CheckResult] = []
        diff = []
        try:
            changes = net_changes(episode.changes())
            diff = diff_entries(changes)
            if task.rubric:
                checks = self._run_checks(episode, task, answer, changes, conversation)
        except VerifierTimeout:
            failure = failure or f"the verifier timed out after {self.timeout:g} s"
        except Exception as exc:  # fail closed, and say why
            log.exception("verifier error", task=task.id, episode=episode.id)
            failure = failure or f"verifier error: {type(exc).__name__}: {exc}"
        total = sum(c.weight for c in checks)
        partial = sum(c.weight for c in checks if c.passed) / total if total else 0.0
        passed = failure is None and bool(checks) and all(c.passed for c in checks)
        verdict = Verdict(
            task_id=task.id, world=self.world.name, world_version=self.world.version, episode_id=episode.id,
            passed=passed, reward=1.0 if passed else 0.0, partial_reward=0.0 if failure else round(partial, 6),
            failure=failure, checks=checks, diff=diff, answer=answer, calls=episode.calls,
            state_hash=episode.state_hash(),
        )
        episode.verdict = verdict.model_dump(mode="json")
        return verdict

    def _refusal(self, episode: Episode, task: Task) -> str | None:
        """A reason to fail closed that needs no checks, or None."""
        if not task.rubric:
            return "the rubric is empty: nothing is checked, so nothing passes"
        if episode.world.name != self.world.name:
            return f"the episode is of world {episode.world.name!r}, the task of {self.world.name!r}"
        if episode.template_version != self.world.version:
            return (f"world version mismatch: the episode was built from version {episode.template_version}, "
                    f"the verifier's world is version {self.world.version}")
        if episode.task_id != task.id:
            return f"the episode was created for task {episode.task_id!r}, not {task.id!r}"
        if episode.flagged:
            return f"a simulator bug happened during the episode ({episode.flags[0]}); it cannot be graded as a pass"
        return None

    def _run_checks(self, episode: Episode, task: Task, answer: str | None, changes: NetChanges,
                    conversation: list[dict[str, Any]] | None) -> list[CheckResult]:
        deadline = time.monotonic() + self.timeout
        cancelled = threading.Event()

        def abort_slow_queries() -> int:
            return 1 if cancelled.is_set() or time.monotonic() > deadline else 0

        ctx = GradingContext(
            task=task, episode=episode, answer=answer, transcript=episode.transcript(), changes=changes,
            volatile=self.tasks.volatile_for(task), gold_changes=lambda: self.gold_changes(task),
            conversation=conversation,
        )

        def run() -> list[CheckResult]:
            results = []
            for check in task.rubric:
                passed, reason = evaluate(ctx, check)
                results.append(CheckResult(type=check.type, requirement=check.requirement, weight=check.weight,
                                           noop_passes=check.noop_passes, passed=passed, reason=reason))
            return results

        episode.conn.set_progress_handler(abort_slow_queries, 10_000)
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcpsim-verify")
        try:
            return pool.submit(run).result(timeout=max(0.0, deadline - time.monotonic()))
        except concurrent.futures.TimeoutError:
            cancelled.set()
            raise VerifierTimeout from None
        finally:
            pool.shutdown(wait=False)
            if not cancelled.is_set():
                episode.conn.set_progress_handler(None, 0)
