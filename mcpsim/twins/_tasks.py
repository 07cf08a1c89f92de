"""Tasks for a twin (`mcpsim gen --from-mcp`): real mcpsim tasks over the twin's seeded data, each
kept only if `mcpsim check`'s audit (`mcpsim.audit.check_task`, what the factory's validator runs on
a world's tasks) finds nothing wrong with it: the gold solution passes twice, a do-nothing agent
fails, every cheating baseline fails, the alternatives pass and the near misses fail.

    generate_twin_tasks(spec, *, count=10, seed=0) -> list[Task]
    validate_twin_tasks(spec, *, count=10, seed=0) -> ValidationReport   # the factory's report
    python -m mcpsim.twins tasks TWIN.json [--count N] [--seed S] > TWIN.tasks.yaml

Only the tools the twin simulates are used (a `call` tool changes nothing and replays recorded
answers). The kinds, taken in turn:

- `write`: create a record (a create or upsert tool, with new values);
- `change`: change an existing record (update, append to or remove from a list field, rename,
  delete);
- `workflow`: create a record, then change it;
- `lookup`: how many records a search matches (a list tool with a query), stated in the answer.

The rubric: a row check per record the gold solution created or deleted (the record's key is the
table's `id`), `gold_state` (every record as the gold solution leaves it), `allowed_changes`, and
the answer's facts for a lookup."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any, Literal

from mcpsim.acceptance import ValidationReport
from mcpsim.audit import check_task
from mcpsim.grading import Verifier
from mcpsim.taskgen import GREETING_SLOT, GREETINGS, PERSONAS, keep_sound, plans_in_turn, reworded
from mcpsim.tasks import (
    CANARY_PREFIX,
    Action,
    AllowedChanges,
    AnswerFacts,
    Check,
    GoldState,
    RowAbsent,
    RowExists,
    Solution,
    Task,
    TaskFile,
    TaskSet,
    UserSpec,
)
from mcpsim.twins._plans import Kind, Plan, TwinPlanner
from mcpsim.twins._requests import REQUESTS, entity_label
from mcpsim.twins._sandbox import SCALE, TwinSandbox
from mcpsim.twins._twin_spec import TwinSpec
from mcpsim.twins._world import sample_arguments

DIFFICULTY: dict[Kind, Literal["easy", "medium", "hard"]] = {
    "write": "easy",
    "change": "medium",
    "lookup": "easy",
    "workflow": "hard",
}


def canary(spec: TwinSpec) -> str:
    return f"{CANARY_PREFIX}-{hashlib.sha256(('twin-canary' + spec.digest()).encode()).hexdigest()[:24]}"


def twin_task_set(spec: TwinSpec, tasks: list[Task]) -> TaskSet:
    """A twin's tasks as its task set (one file, with a canary derived from the twin spec)."""
    return TaskSet(world=spec.name, files=[TaskFile(world=spec.name, canary=canary(spec), tasks=tasks)])


class TwinTaskGenerator:
    """A twin's tasks: plans (`TwinPlanner`) over its start episode (`TwinSandbox`), each made
    into a task with its rubric, alternatives and near misses, and kept if the audit finds it
    sound."""

    def __init__(self, spec: TwinSpec, *, seed: int = 0) -> None:
        self.spec = spec
        self.seed = seed
        self.sandbox = TwinSandbox(spec, seed=seed)
        self.planner = TwinPlanner(self.sandbox)
        self.rng = self.sandbox.rng
        self.tools = self.sandbox.tools
        self.dropped: Counter[str] = Counter()

    def close(self) -> None:
        self.sandbox.close()

    # -- plans ----------------------------------------------------------------------------------

    def write_plans(self) -> Iterator[Plan]:
        return self.planner.write_plans()

    def change_plans(self) -> Iterator[Plan]:
        return self.planner.change_plans()

    def workflow_plans(self) -> Iterator[Plan]:
        return self.planner.workflow_plans()

    def lookup_plans(self) -> Iterator[Plan]:
        return self.planner.lookup_plans()

    # -- tasks ----------------------------------------------------------------------------------

    def task(self, plan: Plan, number: int) -> Task:
        gold = plan.gold
        rubric: list[Check] = [*self._row_checks(gold)]
        writes = plan.kind != "lookup"
        rubric.append(
            GoldState(
                type="gold_state",
                requirement="Every record ends as the request leaves it.",
                noop_passes=not writes,
            )
        )
        rubric.append(
            AllowedChanges(
                type="allowed_changes", requirement="Nothing changed beyond what was asked.", noop_passes=True
            )
        )
        if plan.facts:
            rubric.append(
                AnswerFacts(type="answer_facts", requirement="The final answer states the count.", noop_passes=False)
            )
        alternatives = []
        if plan.facts:
            alternatives.append(Solution(name="states the answer in other words", answer=reworded(plan.facts)))
        elif (read := self._read_before(gold[0])) is not None:
            alternatives.append(Solution(name="reads the records before changing them", steps=[read, *gold]))
        near_misses = []
        if plan.near_miss is not None:
            near_misses.append(Solution(name=plan.near_miss[0], steps=list(plan.near_miss[1])))
        if plan.wrong_answer is not None:
            near_misses.append(Solution(name="answers with a wrong count", answer=plan.wrong_answer))
        instruction = (
            plan.request
            if plan.kind == "lookup"
            else self.rng.choice(REQUESTS).format(greeting=GREETING_SLOT, request=plan.request)
        )
        tag = re.sub(r"[^a-z0-9_.-]", "-", plan.tags[-1].lower())[:60]
        return Task(
            id=f"{plan.kind}-{number:03d}-{tag}",
            instruction=instruction.replace(GREETING_SLOT, greeting := self.rng.choice(GREETINGS)),
            user=UserSpec(persona=self.rng.choice(PERSONAS), wants=plan.request.replace(GREETING_SLOT, greeting)),
            seed=self.seed,
            scale=SCALE,
            gold=gold,
            answer=plan.facts,
            rubric=rubric,
            alternatives=alternatives,
            near_misses=near_misses,
            tags=["twin", plan.kind, *plan.tags],
            difficulty=DIFFICULTY[plan.kind],
            split=self.rng.choices(["train", "dev", "test"], weights=[6, 2, 2])[0],
        )

    def _read_before(self, action: Action) -> Action | None:
        """A search of the records the action writes, with no query (all of them)."""
        entity = self.spec.tool(action.tool).operation.entity
        for tool in self.tools:
            if tool.operation.kind == "list" and tool.operation.entity == entity:
                args = sample_arguments(self.spec, tool, self.sandbox.existing(self.sandbox.start))
                if tool.operation.query:
                    args[tool.operation.query] = ""
                fork = self.sandbox.start.fork(id="twin-tasks-read")
                try:
                    if not fork.call(tool.name, args).is_error:
                        return Action(tool=tool.name, args=args)
                finally:
                    fork.close()
        return None

    def _row_checks(self, gold: list[Action]) -> list[Check]:
        """A check per record the gold solution created (it exists) or deleted (it is gone)."""
        episode = self.sandbox.start.fork(id="twin-tasks-gold")
        try:
            for a in gold:
                episode.call(a.tool, a.args)
            changes = episode.net_changes()
        finally:
            episode.close()
        checks: list[Check] = []
        for (table, _), change in sorted(changes.items()):
            if not table.endswith("_records") or (change.before is None) == (change.after is None):
                continue  # another table, or a record changed in place (gold_state grades it)
            label = entity_label(table.removesuffix("_records"))
            row = change.before or change.after or {}
            common: dict[str, Any] = {"table": table, "where": {"id": row["id"]}, "noop_passes": False}
            if change.after is None:
                checks.append(
                    RowAbsent(type="row_absent", requirement=f"The {label} {row['id']} is deleted.", **common)
                )
            else:
                checks.append(RowExists(type="row_exists", requirement=f"The {label} {row['id']} exists.", **common))
        return checks

    def sound(self, task: Task) -> list[str]:
        """What `mcpsim check` finds wrong with a task."""
        tasks = twin_task_set(self.spec, [task])
        verifier = Verifier(self.sandbox.world, tasks, templates=self.sandbox.templates)
        return check_task(self.sandbox.world, verifier, task, tasks.canaries).problems

    def candidates(self) -> Iterator[Task]:
        """Every candidate task, in the order `generate` tries them: the kinds in turn, each plan once."""
        sources: dict[str, Iterator[Plan]] = {
            "write": self.write_plans(),
            "change": self.change_plans(),
            "lookup": self.lookup_plans(),
            "workflow": self.workflow_plans(),
        }
        for number, plan in enumerate(plans_in_turn(sources), 1):
            yield self.task(plan, number)

    def generate(self, count: int) -> list[Task]:
        """Up to `count` sound tasks (taskgen's loop: `keep_sound`); a candidate the audit refuses
        is dropped and counted (by the check it fails) in `dropped`."""
        return keep_sound(self.candidates(), count, self.sound, self.dropped)


def generate_twin_tasks(spec: TwinSpec, *, count: int = 10, seed: int = 0) -> list[Task]:
    """Up to `count` audited tasks over the twin seeded with `seed`; the same spec and seed give
    the same tasks in any process. The audit runs an event loop of its own: from async code, call
    this in a worker thread (`anyio.to_thread.run_sync`)."""
    generator = TwinTaskGenerator(spec, seed=seed)
    try:
        return generator.generate(count)
    finally:
        generator.close()


def validate_twin_tasks(spec: TwinSpec, *, count: int = 10, seed: int = 0) -> ValidationReport:
    """The factory's validation report for a twin's tasks: `tasks_generated` fails when fewer
    than `count` sound tasks were found; `candidates_dropped` counts the candidates the audit
    refused, by the check they failed."""
    generator = TwinTaskGenerator(spec, seed=seed)
    try:
        report = ValidationReport(spec.name, generator.sandbox.start.state_hash())
        report.tasks = generator.generate(count)
        report.dropped = dict(generator.dropped)
    finally:
        generator.close()
    if len(report.tasks) < count:
        why = ", ".join(f"{n} by {c}" for c, n in Counter(report.dropped).most_common()) or "none; no more plans"
        report.failures["tasks_generated"].append(
            f"{len(report.tasks)} of {count} tasks generated (candidates dropped: {why})"
        )
    return report
