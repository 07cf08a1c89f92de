"""Validation of a compiled world before it is accepted: its tools are driven with arguments drawn
from its seeded data until each has succeeded and each named refusal has been seen.

Criteria (a report counts the failures of each):
- `seed_constraints`: every seeded row keeps its fields' constraints and the world's invariants;
- `tool_succeeds`: every tool succeeds at least once (a precondition that can never be satisfied
  shows here, with the refusal that always blocked it);
- `precondition_violated`: every named refusal (preconditions, state transitions, ownership,
  references) is met at least once (a precondition that can never be violated shows here);
- `refusal_changes_nothing`: a refused call leaves the state hash as it was;
- `refusal_named`: every business error is one of the tool's named refusals (or a not-found);
- `no_simulator_bug`: no call raised anything but a business error;
- `deterministic_template`: another process (a fresh interpreter with another PYTHONHASHSEED: two
  started for the world, or one long-lived `DeterminismChecker` for many) builds the same template
  hash and draws the same candidate tasks, in the same order (`taskgen.candidates_digest`; the
  audit of each candidate runs once, here).

Then its tasks (the generated ones, `mcpsim.taskgen._generator`, and any the spec declares) go
through `mcpsim check`'s audit (`mcpsim.audit._audit.check_task`), each problem counted under one criterion:
- `tasks_generated`: the generator found as many sound tasks as asked for;
- `task_well_formed`: the task's tools exist and no canary string reaches the agent;
- `not_satisfied_at_start`: a do-nothing agent fails the task, and every check's `noop_passes`
  label says what a do-nothing agent gets;
- `gold_passes_twice`: the gold actions replay and pass, twice, ending in the same state hash
  (and fail only where they expect an injected fault);
- `baselines_fail`: every cheating baseline fails (pasted reads, the policy text, negated and
  stuffed answers, an extra write, injected text, a reverted irreversible write, a blind request
  for the go-ahead, the random agent, giving up at the first fault);
- `alternatives_pass`, `near_misses_fail`: the task's other solutions behave;
- `not_trivial`: the share of the world's tasks that a transcribing agent passes (the audit's
  `transcriber` and `one_step_greedy` baselines) is recorded (`trivial_rates`) and must not exceed
  `trivial_limit` (default `TRIVIAL_GATE`, 5%; None records only). A generated candidate either
  passes is dropped under this criterion, so only the spec's own tasks can add to the rate.

And its words (`_wording`): `wording` fails on text no person would write in the instructions, tool
descriptions, policy and seeded text (a wrong article, a column named as a noun, Faker's filler; an
argument dump or a quoted id in a task that is to make the agent find things out); the report's
`wording` counts every kind the lint knows, enforced or not. A generated candidate the lint refuses
is dropped before its audit and counted under `wording` in `dropped`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mcpsim.acceptance._wording import candidate_problems, wording_hits, wording_problems
from mcpsim.acceptance._wording import counts as wording_counts
from mcpsim.audit import RATED, check_task
from mcpsim.engine import CallResult, Episode, TemplateCache
from mcpsim.grading import Verifier
from mcpsim.specs import ActionSpec, Arguments, CompiledWorld, SpecError, compile_spec, message_pattern, parse_spec
from mcpsim.taskgen import TaskGenerator, candidates_digest, task_check, task_set
from mcpsim.tasks import Task
from mcpsim.world import derive_seed

CRITERIA = (
    "seed_constraints",
    "tool_succeeds",
    "precondition_violated",
    "refusal_changes_nothing",
    "refusal_named",
    "no_simulator_bug",
    "deterministic_template",
    "tasks_generated",
    "wording",
    "task_well_formed",
    "not_satisfied_at_start",
    "gold_passes_twice",
    "baselines_fail",
    "alternatives_pass",
    "near_misses_fail",
    "not_trivial",
)
RATED_BASELINES: tuple[str, ...] = tuple(sorted(RATED))  # `mcpsim check`'s baselines judged by their rate
# The highest share of a world's tasks a transcribing baseline may pass before acceptance rejects the
# world (None: the rates are recorded, nothing is rejected). Generated tasks it passes are dropped as
# candidates, so only a spec's own tasks can reach it.
TRIVIAL_GATE: float | None = 0.05
TOOL_CRITERIA = CRITERIA[:6]  # run on every world: its seed data and its tools driven
AUDIT_CRITERIA = CRITERIA[9:]  # run on each task `mcpsim check`'s audit looks at
REQUIRED_ORIGINS = {"precondition", "state", "reference", "input"}
NOT_FOUND = re.compile(r"^.+ not found$")
CALLS_PER_ACTION = 400
DRIVES = 4  # successful writes per action driven further


@dataclass
class ActionStats:
    calls: int = 0
    successes: int = 0
    refusals: Counter[str] = field(default_factory=Counter)


@dataclass
class ValidationReport:
    world: str
    template_hash: str
    failures: dict[str, list[str]] = field(default_factory=lambda: {c: [] for c in CRITERIA})
    actions: dict[str, ActionStats] = field(default_factory=dict)
    tasks: list[Task] = field(default_factory=list)  # the tasks validated: generated, then the spec's
    dropped: dict[str, int] = field(default_factory=dict)  # generated candidates the audit refused, by criterion
    criteria_run: list[str] = field(default_factory=list)  # the criteria that ran (in CRITERIA order)
    trivial_rates: dict[str, float] = field(default_factory=dict)  # RATED_BASELINES' pass rates over the tasks
    wording: dict[str, int] = field(default_factory=dict)  # the wording lint's hits per kind

    @property
    def ok(self) -> bool:
        return not any(self.failures.values())

    def counts(self) -> dict[str, int]:
        """Failures per criterion."""
        return {criterion: len(found) for criterion, found in self.failures.items()}

    def failed_criteria(self) -> list[str]:
        return [criterion for criterion, found in self.failures.items() if found]

    def to_json(self) -> dict[str, Any]:
        return {
            "world": self.world,
            "accepted": self.ok,
            "template_hash": self.template_hash,
            "failures_per_criterion": self.counts(),
            "failures": {k: v for k, v in self.failures.items() if v},
            "tasks": [t.id for t in self.tasks],
            "candidates_dropped": self.dropped,
            "criteria_run": self.criteria_run,
            "trivial_rates": self.trivial_rates,
            "wording": self.wording,
            "actions": {
                name: {"calls": s.calls, "successes": s.successes, "refusals": dict(s.refusals)}
                for name, s in self.actions.items()
            },
        }


class Validator:
    def __init__(
        self, compiled: CompiledWorld, *, seed: int = 0, scale: str = "small", trivial_limit: float | None = None
    ) -> None:
        self.trivial_limit = trivial_limit
        self.compiled = compiled
        self.spec = compiled.spec
        self.world = compiled.world
        self.seed = seed
        self.scale = scale
        self.templates = TemplateCache(None)  # in memory: nothing shared with other processes
        self.arguments = Arguments(compiled, seed=seed)

    def run(
        self, *, processes: bool = True, task_count: int = 10, checker: DeterminismChecker | None = None
    ) -> ValidationReport:
        try:
            episode = Episode.create(self.world, self.seed, self.scale, templates=self.templates)
        except SpecError as exc:  # a generator that raised: its field's path, no world to drive
            report = ValidationReport(self.world.name, "")
            report.failures["seed_constraints"].append(str(exc))
            report.criteria_run = ["seed_constraints"]
            return report
        report = ValidationReport(self.world.name, episode.state_hash())
        self._check_seed(episode, report)
        for action in self.spec.actions:
            report.actions[action.name] = self._exercise(action, episode, report)
        self._check_coverage(report)
        episode.close()
        ran = set(TOOL_CRITERIA)
        drawn = ""
        if task_count or self.spec.tasks:
            drawn = self._check_tasks(report, task_count)
            ran |= {"tasks_generated"} if task_count else set()
            ran |= set(AUDIT_CRITERIA) if drawn.split()[:1] != ["0"] or self.spec.tasks else set()
        self._check_wording(report)
        ran.add("wording")
        if processes or checker is not None:
            self._check_processes(report, drawn, checker)
            ran.add("deterministic_template")
        report.criteria_run = [c for c in CRITERIA if c in ran]
        return report

    # -- tasks ------------------------------------------------------------------------------------

    def _check_tasks(self, report: ValidationReport, task_count: int) -> str:
        """Generate and audit the tasks; `COUNT DIGEST` of the candidates drawn (for the process criterion)."""
        generated: list[Task] = []
        drawn = ""
        if task_count:
            generator = TaskGenerator(
                self.compiled,
                seed=self.seed,
                scale=self.scale,
                templates=self.templates,
                screen=lambda task: candidate_problems(self.compiled, task),
            )
            try:
                generated = generator.generate(task_count)
            finally:
                generator.close()
            drawn = f"{generator.drawn} {generator.digest}"
            report.dropped = dict(generator.dropped)
            if len(generated) < task_count:
                why = ", ".join(f"{n} by {c}" for c, n in generator.dropped.most_common()) or "none; no more plans"
                report.failures["tasks_generated"].append(
                    f"{len(generated)} of {task_count} tasks generated (candidates dropped: {why})"
                )
        report.tasks = [*generated, *self.spec.tasks]
        tasks = task_set(self.compiled, report.tasks)
        verifier = Verifier(self.world, tasks, templates=self.templates)
        passed = dict.fromkeys(RATED_BASELINES, 0)
        for task in self.spec.tasks:
            # a generated task was audited as the generator kept it, the rated baselines included (it
            # keeps none they pass: `TaskGenerator.sound`); a declared one runs here in full
            audit = check_task(self.world, verifier, task, tasks.canaries)
            for problem in audit.problems:
                report.failures[task_check(problem)].append(f"task {task.id}: {problem}")
            for name in passed:
                passed[name] += name in audit.baselines and audit.baselines[name].passed
        self._check_trivial(report, passed)
        return drawn

    def _check_trivial(self, report: ValidationReport, passed: dict[str, int]) -> None:
        """Record the rated baselines' pass rates; over the limit (if one is set), reject."""
        count = len(report.tasks)
        report.trivial_rates = {name: round(n / count, 4) if count else 0.0 for name, n in passed.items()}
        limit = self.trivial_limit
        for name, rate in report.trivial_rates.items():
            if limit is not None and rate > limit:
                report.failures["not_trivial"].append(
                    f"the {name} baseline passes {passed[name]} of {count} tasks ({rate:.0%}, more than {limit:.0%})"
                )

    def _check_wording(self, report: ValidationReport) -> None:
        episode = Episode.create(self.world, self.seed, self.scale, templates=self.templates)
        try:
            hits = wording_hits(self.compiled, report.tasks, episode)
        finally:
            episode.close()
        report.wording = wording_counts(hits)
        report.failures["wording"] += wording_problems(hits)

    # -- seed data --------------------------------------------------------------------------------

    def _check_seed(self, episode: Episode, report: ValidationReport) -> None:
        for entity, model in self.compiled.models.items():
            for row in episode.query(f'SELECT * FROM "{model.table.name}"'):
                for name, f in model.spec.fields.items():
                    if (problem := f.problem(row[name])) is not None:
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
        params = self.arguments.parameter_values(action, start)  # the same values for every drive below
        candidates = self.arguments.combinations(params)
        successes: list[tuple[dict[str, Any], bytes]] = []  # a write's arguments and the state it left
        episode = Episode.restore(self.world, base)
        for args in candidates:
            if stats.calls >= CALLS_PER_ACTION // 2:
                break
            if self._call(action, episode, args, stats, report):
                if not action.read_only:
                    if len(successes) < DRIVES:
                        successes.append((args, episode.snapshot()))
                    episode.close()
                    episode = Episode.restore(self.world, base)
        episode.close()
        for args, after in successes:  # drive state: repeat a write with one argument varied, nothing restored
            self._drive(action, after, args, params, stats, report)
        return stats

    def _drive(
        self,
        action: ActionSpec,
        after: bytes,
        args: dict[str, Any],
        params: dict[str, list[Any]],
        stats: ActionStats,
        report: ValidationReport,
    ) -> None:
        """The write again from the state its success left (`after`: the same state as calling it
        again on the start, which a refused call before it never changes), with one argument varied
        at a time, each call on the state the one before left."""
        for name, values in params.items():
            episode = Episode.restore(self.world, after)
            for value in [args[name], *values][1:12]:
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

    def _check_processes(self, report: ValidationReport, drawn: str, checker: DeterminismChecker | None) -> None:
        """Other processes (fresh interpreters, other hash seeds) build the same template and draw
        the same candidate tasks in the same order (the audit's verdicts on them are this
        process's: the audit runs once)."""
        spec = self.spec.model_dump(mode="json")
        count = int(drawn.split()[0]) if drawn else 0
        ours = f"{report.template_hash} {drawn or '0 -'}"
        if checker is not None:
            others = [checker.hashes(spec, self.seed, self.scale, count)]
        else:
            others = hashes_in_subprocesses(spec, self.seed, self.scale, count, processes=2)
        if any(other != ours for other in others):
            report.failures["deterministic_template"].append(
                f"template hash and candidate tasks differ: this process {ours}, others {others}"
            )

    # -- arguments ---------------------------------------------------------------------------------


def owner_invariants(compiled: CompiledWorld) -> set[str]:
    return {i.error_name for i in compiled.spec.invariants if i.kind == "ownership"}


def tasks_digest(tasks: list[Task]) -> str:
    text = json.dumps([t.model_dump(mode="json") for t in tasks], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def process_hashes(spec: dict[str, Any], seed: int, scale: str, candidates: int) -> str:
    """`TEMPLATE_HASH COUNT DIGEST`: the template's hash and the digest of the first `candidates`
    candidate tasks (`mcpsim.taskgen._generator.candidates_digest`) that this process builds."""
    compiled = compile_spec(parse_spec(spec, source=str(spec.get("name", "spec"))))
    episode = Episode.create(compiled.world, seed, scale, templates=TemplateCache(None))
    try:
        template = episode.state_hash()
    finally:
        episode.close()
    if not candidates:
        return f"{template} 0 -"
    return f"{template} {candidates} {candidates_digest(compiled, count=candidates, seed=seed, scale=scale)}"


def other_hash_seed() -> str:
    """A PYTHONHASHSEED unlike this process's (so sets of strings iterate in another order)."""
    own = os.environ.get("PYTHONHASHSEED", "")
    return (
        str((int(own) + 1) % 4_294_967_296)
        if own.isdigit()
        else str(derive_seed("other-hash-seed") % 4_294_967_295 + 1)
    )


def _child_env() -> dict[str, str]:
    return os.environ | {"PYTHONHASHSEED": other_hash_seed()}


def hashes_in_subprocesses(
    spec: dict[str, Any], seed: int, scale: str, candidates: int = 0, *, processes: int = 2
) -> list[str]:
    """What `process_hashes` gives in other Python processes (fresh interpreters with another
    hash seed, run at once); `error: ...` for one that failed."""
    command = [sys.executable, "-m", "mcpsim.acceptance", "hash", "-", "--seed", str(seed), "--scale", scale]
    command += ["--candidates", str(candidates)]
    running = [
        subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_child_env(),
        )
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


class DeterminismChecker:
    """One long-lived Python process, started fresh with another hash seed, that answers
    `process_hashes` for spec after spec (`python -m mcpsim.acceptance hashes`): the process criterion of
    many worlds without paying an interpreter's start-up for each. Close it (or leave the `with`)."""

    def __init__(self, timeout: float = 300.0) -> None:
        self.timeout = timeout
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "mcpsim.acceptance", "hashes"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=_child_env(),
            )
        return self.proc

    def hashes(self, spec: dict[str, Any], seed: int, scale: str, candidates: int) -> str:
        """`process_hashes` as the other process computes it, or `error: ...`."""
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        request = {"spec": spec, "seed": seed, "scale": scale, "candidates": candidates}
        answer: list[str] = []
        reader = threading.Thread(target=lambda: answer.append(proc.stdout.readline() if proc.stdout else ""))
        try:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
        except OSError as exc:
            self.close()
            return f"error: the checker process is gone ({exc})"
        reader.start()
        reader.join(self.timeout)
        if reader.is_alive() or not answer or not answer[0]:
            code = proc.poll()
            self.close()  # stuck or dead: the next world starts a new one
            if code is not None:
                return f"error: the checker process ended (exit code {code}) without answering"
            return f"error: no answer from the checker process within {self.timeout:g} s"
        return answer[0].strip()

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.stdin is not None:
                self.proc.stdin.close()  # its end of input: it exits
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self.proc = None

    def __enter__(self) -> DeterminismChecker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def validate(
    compiled: CompiledWorld,
    *,
    seed: int = 0,
    scale: str = "small",
    processes: bool = True,
    task_count: int | None = None,
    checker: DeterminismChecker | None = None,
    trivial_limit: float | None = TRIVIAL_GATE,
) -> ValidationReport:
    """Every criterion on a compiled world and its tasks: `task_count` generated (default: the spec's
    `generated_tasks`; 0: none) and the spec's own. The report's `tasks` are the accepted world's
    tasks. The process check runs in `checker` if one is given, else in two fresh processes
    (`processes=False`: not at all). Above `trivial_limit`, a transcribing baseline's pass rate
    rejects the world (None: recorded only)."""
    count = compiled.spec.generated_tasks if task_count is None else task_count
    validator = Validator(compiled, seed=seed, scale=scale, trivial_limit=trivial_limit)
    return validator.run(processes=processes, task_count=count, checker=checker)
