"""Validation of a compiled world before it is accepted: its tools are driven with arguments drawn
from its seeded data until each has succeeded and each named refusal has been seen.

Checks (a report counts the failures of each):
- `seed_constraints`: every seeded row keeps its fields' constraints and the world's invariants;
- `tool_succeeds`: every tool succeeds at least once (a precondition that can never be satisfied
  shows here, with the refusal that always blocked it);
- `precondition_violated`: every named refusal (preconditions, state transitions, ownership,
  references) is met at least once (a precondition that can never be violated shows here);
- `refusal_changes_nothing`: a refused call leaves the state hash as it was;
- `refusal_named`: every business error is one of the tool's named refusals (or a not-found);
- `no_simulator_bug`: no call raised anything but a business error;
- `deterministic_template`: two other processes build the same template hash, and generate the
  same tasks.

Then its tasks (the generated ones, `mcpsim.factory.taskgen`, and any the spec declares) go
through `mcpsim check`'s audit (`mcpsim.audit.check_task`), each problem counted under one check:
- `tasks_generated`: the generator found as many sound tasks as asked for;
- `task_well_formed`: the task's tools exist and no canary string reaches the agent;
- `not_satisfied_at_start`: a do-nothing agent fails the task, and every check's `noop_passes`
  label says what a do-nothing agent gets;
- `gold_passes_twice`: the gold actions replay and pass, twice, ending in the same state hash
  (and fail only where they expect an injected fault);
- `baselines_fail`: every cheating baseline fails (pasted reads, the policy text, negated and
  stuffed answers, an extra write, injected text, a reverted irreversible write, the random
  agent, giving up at the first fault);
- `alternatives_pass`, `near_misses_fail`: the task's other solutions behave.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mcpsim.audit import check_task
from mcpsim.engine.episode import CallResult, Episode
from mcpsim.engine.templates import TemplateCache
from mcpsim.factory.arguments import Arguments
from mcpsim.factory.checks import NUMERIC
from mcpsim.factory.compiler import CompiledWorld
from mcpsim.factory.operands import message_pattern
from mcpsim.factory.schema import ISO_DATE, ISO_DATETIME
from mcpsim.factory.spec import ActionSpec, FieldSpec
from mcpsim.factory.taskgen import TaskGenerator, task_check, task_set
from mcpsim.grading import Verifier
from mcpsim.tasks import Task

CHECKS = (
    "seed_constraints",
    "tool_succeeds",
    "precondition_violated",
    "refusal_changes_nothing",
    "refusal_named",
    "no_simulator_bug",
    "deterministic_template",
    "tasks_generated",
    "task_well_formed",
    "not_satisfied_at_start",
    "gold_passes_twice",
    "baselines_fail",
    "alternatives_pass",
    "near_misses_fail",
)
REQUIRED_ORIGINS = {"precondition", "state", "reference", "input"}
NOT_FOUND = re.compile(r"^.+ not found$")
CALLS_PER_ACTION = 400


@dataclass
class ActionStats:
    calls: int = 0
    successes: int = 0
    refusals: Counter[str] = field(default_factory=Counter)


@dataclass
class ValidationReport:
    world: str
    template_hash: str
    failures: dict[str, list[str]] = field(default_factory=lambda: {c: [] for c in CHECKS})
    actions: dict[str, ActionStats] = field(default_factory=dict)
    tasks: list[Task] = field(default_factory=list)  # the tasks validated: generated, then the spec's
    dropped: dict[str, int] = field(default_factory=dict)  # generated candidates the audit refused, by check

    @property
    def ok(self) -> bool:
        return not any(self.failures.values())

    def counts(self) -> dict[str, int]:
        """Failures per check."""
        return {check: len(found) for check, found in self.failures.items()}

    def failed_checks(self) -> list[str]:
        return [check for check, found in self.failures.items() if found]

    def to_json(self) -> dict[str, Any]:
        return {
            "world": self.world,
            "accepted": self.ok,
            "template_hash": self.template_hash,
            "failures_per_check": self.counts(),
            "failures": {k: v for k, v in self.failures.items() if v},
            "tasks": [t.id for t in self.tasks],
            "candidates_dropped": self.dropped,
            "actions": {
                name: {"calls": s.calls, "successes": s.successes, "refusals": dict(s.refusals)}
                for name, s in self.actions.items()
            },
        }


class Validator:
    def __init__(self, compiled: CompiledWorld, *, seed: int = 0, scale: str = "small") -> None:
        self.compiled = compiled
        self.spec = compiled.spec
        self.world = compiled.world
        self.seed = seed
        self.scale = scale
        self.templates = TemplateCache(None)  # in memory: nothing shared with other processes
        self.arguments = Arguments(compiled, seed=seed)

    def run(self, *, processes: bool = True, task_count: int = 10) -> ValidationReport:
        episode = Episode.create(self.world, self.seed, self.scale, templates=self.templates)
        report = ValidationReport(self.world.name, episode.state_hash())
        self._check_seed(episode, report)
        for action in self.spec.actions:
            report.actions[action.name] = self._exercise(action, episode, report)
        self._check_coverage(report)
        episode.close()
        if task_count or self.spec.tasks:
            self._check_tasks(report, task_count)
        if processes:
            self._check_processes(report, task_count)
        return report

    # -- tasks ------------------------------------------------------------------------------------

    def _check_tasks(self, report: ValidationReport, task_count: int) -> None:
        generated: list[Task] = []
        if task_count:
            generator = TaskGenerator(self.compiled, seed=self.seed, scale=self.scale)
            try:
                generated = generator.generate(task_count)
            finally:
                generator.close()
            report.dropped = dict(generator.dropped)
            if len(generated) < task_count:
                why = ", ".join(f"{n} by {c}" for c, n in generator.dropped.most_common()) or "none; no more plans"
                report.failures["tasks_generated"].append(
                    f"{len(generated)} of {task_count} tasks generated (candidates dropped: {why})"
                )
        report.tasks = [*generated, *self.spec.tasks]
        tasks = task_set(self.compiled, report.tasks)
        verifier = Verifier(self.world, tasks, templates=self.templates)
        own = set(map(id, self.spec.tasks))
        for task in report.tasks:
            # a generated task was audited as the generator kept it: only a declared one runs here in full
            problems = check_task(self.world, verifier, task, tasks.canaries).problems if id(task) in own else []
            for problem in problems:
                report.failures[task_check(problem)].append(f"task {task.id}: {problem}")

    # -- seed data --------------------------------------------------------------------------------

    def _check_seed(self, episode: Episode, report: ValidationReport) -> None:
        for entity, model in self.compiled.models.items():
            for row in episode.query(f'SELECT * FROM "{model.table.name}"'):
                for name, f in model.spec.fields.items():
                    if (problem := field_problem(f, row[name])) is not None:
                        report.failures["seed_constraints"].append(f"{entity} {row['id']}.{name}: {problem}")
        for inv in self.spec.invariants:
            table = self.compiled.models[inv.entity].table.name
            if inv.kind == "non_negative":
                bad = episode.query(f'SELECT id FROM "{table}" WHERE "{inv.field}" < 0')
            elif inv.kind == "capacity":
                limit = f'"{inv.limit_field}"' if inv.limit_field else str(inv.limit)
                bad = episode.query(f'SELECT id FROM "{table}" WHERE "{inv.field}" > {limit}')
            else:
                continue
            report.failures["seed_constraints"] += [f"{inv.entity} {r['id']} breaks {inv.error_name}" for r in bad]

    # -- driving the tools ------------------------------------------------------------------------

    def _exercise(self, action: ActionSpec, start: Episode, report: ValidationReport) -> ActionStats:
        stats = ActionStats()
        base = start.snapshot()
        candidates = self.arguments.candidates(action, start)
        successes: list[dict[str, Any]] = []
        episode = Episode.restore(self.world, base)
        for args in candidates:
            if stats.calls >= CALLS_PER_ACTION // 2:
                break
            if self._call(action, episode, args, stats, report):
                successes.append(args)
                if not action.read_only:
                    episode.close()
                    episode = Episode.restore(self.world, base)
        episode.close()
        for args in successes[:4]:  # drive state: repeat a write with one argument varied, nothing restored
            self._drive(action, base, args, start, stats, report)
        return stats

    def _drive(
        self,
        action: ActionSpec,
        base: bytes,
        args: dict[str, Any],
        start: Episode,
        stats: ActionStats,
        report: ValidationReport,
    ) -> None:
        if action.read_only:
            return
        params = self.arguments.parameter_values(action, start)
        for name, values in params.items():
            episode = Episode.restore(self.world, base)
            for value in [args[name], *values][:12]:
                if stats.calls >= CALLS_PER_ACTION:
                    break
                varied = self.arguments.resolved(action, args | {name: value}, episode)
                self._call(action, episode, varied, stats, report)
            episode.close()

    def _call(
        self, action: ActionSpec, episode: Episode, args: dict[str, Any], stats: ActionStats, report: ValidationReport
    ) -> bool:
        args = self.arguments.resolved(action, args, episode)
        before = episode.state_hash()
        result = episode.call(action.name, args)
        stats.calls += 1
        if not result.is_error:
            stats.successes += 1
            return True
        self._judge_refusal(action, args, result, before, episode, stats, report)
        return False

    def _judge_refusal(
        self,
        action: ActionSpec,
        args: dict[str, Any],
        result: CallResult,
        before: str,
        episode: Episode,
        stats: ActionStats,
        report: ValidationReport,
    ) -> None:
        where = f"{action.name}({json.dumps(args, default=str)})"
        error = result.error or ""
        if result.bug:
            report.failures["no_simulator_bug"].append(f"{where}: {episode.flags[-1] if episode.flags else error}")
            return
        if episode.state_hash() != before:
            report.failures["refusal_changes_nothing"].append(f"{where} was refused ({error}) but changed the state")
        name = self._refusal_name(action, error)
        if name is None:
            report.failures["refusal_named"].append(f"{where}: unnamed error {error!r}")
            return
        stats.refusals[name] += 1

    def _refusal_name(self, action: ActionSpec, error: str) -> str | None:
        for refusal in self.compiled.actions[action.name].refusals:
            if message_pattern(refusal.template).match(error):
                return refusal.name
        if NOT_FOUND.match(error):
            return "not_found"
        if error.startswith("Invalid arguments"):
            return "invalid_arguments"
        return None

    def _check_coverage(self, report: ValidationReport) -> None:
        for action in self.spec.actions:
            stats = report.actions[action.name]
            if stats.successes == 0:
                blocked = ", ".join(f"{n} x{c}" for n, c in stats.refusals.most_common()) or "nothing"
                report.failures["tool_succeeds"].append(
                    f"{action.name} never succeeded in {stats.calls} calls (refused by: {blocked})"
                )
            for refusal in self.compiled.actions[action.name].refusals:
                required = refusal.origin in REQUIRED_ORIGINS or refusal.name in owner_invariants(self.compiled)
                if required and stats.refusals[refusal.name] == 0:
                    report.failures["precondition_violated"].append(
                        f"{action.name}: {refusal.name} was never violated in {stats.calls} calls"
                    )

    def _check_processes(self, report: ValidationReport, task_count: int) -> None:
        spec = self.spec.model_dump(mode="json")
        ours = f"{report.template_hash} {tasks_digest(report.tasks[: len(report.tasks) - len(self.spec.tasks)])}"
        others = hashes_in_subprocesses(spec, self.seed, self.scale, task_count, processes=2)
        if any(other != ours for other in others):
            report.failures["deterministic_template"].append(
                f"template hash and tasks differ: this process {ours}, others {others}"
            )

    # -- arguments ---------------------------------------------------------------------------------


def owner_invariants(compiled: CompiledWorld) -> set[str]:
    return {i.error_name for i in compiled.spec.invariants if i.kind == "ownership"}


def field_problem(f: FieldSpec, value: Any) -> str | None:
    """What is wrong with a stored value for a field, or None."""
    if value is None:
        return None if f.optional else "is empty but not optional"
    if f.type == "enum" and value not in (f.values or []):
        return f"{value!r} is not one of {f.values}"
    if f.type in NUMERIC:
        if f.min is not None and value < f.min:
            return f"{value} is below the minimum {f.min:g}"
        if f.max is not None and value > f.max:
            return f"{value} is above the maximum {f.max:g}"
    if isinstance(value, str):
        return _text_problem(f, value)
    return None


def _text_problem(f: FieldSpec, value: str) -> str | None:
    if f.max_length is not None and len(value) > f.max_length:
        return f"is {len(value)} characters, more than {f.max_length}"
    if f.min_length is not None and len(value) < f.min_length:
        return f"is {len(value)} characters, fewer than {f.min_length}"
    pattern = f.pattern or {"date": ISO_DATE, "datetime": ISO_DATETIME}.get(f.type)
    if pattern and not re.search(pattern, value):
        return f"{value!r} does not match {pattern}"
    return None


def tasks_digest(tasks: list[Task]) -> str:
    text = json.dumps([t.model_dump(mode="json") for t in tasks], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def hashes_in_subprocesses(
    spec: dict[str, Any], seed: int, scale: str, task_count: int = 0, *, processes: int = 2
) -> list[str]:
    """The template hash and generated tasks' digest that other Python processes (run at once)
    build from the same spec; `error: ...` for one that failed."""
    command = [sys.executable, "-m", "mcpsim.factory", "hash", "-", "--seed", str(seed), "--scale", scale]
    command += ["--tasks", str(task_count)]
    running = [
        subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(processes)
    ]
    found = []
    for proc in running:
        try:
            out, err = proc.communicate(json.dumps(spec), timeout=300)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            err = f"timed out after 300 s; {err}"
        found.append(out.strip() if proc.returncode == 0 else f"error: {err.strip()[-500:]}")
    return found


def validate(
    compiled: CompiledWorld,
    *,
    seed: int = 0,
    scale: str = "small",
    processes: bool = True,
    task_count: int | None = None,
) -> ValidationReport:
    """Every check on a compiled world and its tasks: `task_count` generated (default: the spec's
    `generated_tasks`; 0: none) and the spec's own. The report's `tasks` are the accepted world's
    tasks."""
    count = compiled.spec.generated_tasks if task_count is None else task_count
    return Validator(compiled, seed=seed, scale=scale).run(processes=processes, task_count=count)
