"""Tasks for a compiled world, generated from its seeded data: real mcpsim tasks (`mcpsim.tasks`)
that the grader, `mcpsim check` and the runner take like hand-written ones.

    generate_tasks(compiled, *, count=10, seed=0, scale=None) -> list[Task]
    task_set(compiled, tasks) -> TaskSet        # the tasks as one file, with a canary of the spec's

Each task is a plan found by calling the world's tools on a fresh episode of the seeded world
(`_probe.WorldProbe`). The plan kinds take turns, in the order `TURNS` names them (the composed
kinds hold most turns); each is a module holding its plans function and a row in `_kinds.PLAN_KINDS`.

Composed kinds (`_targets` finds their targets): the user gives their name, never an id; the agent
finds them by a search, verifies them, lists their records (every page) and reads the ids it acts
on from the results, so later calls chain on earlier ones:

- `pick` (`_composed`): the record a property names ("my pending order for the book with the
  highest price"), ranked by a field of its own or of the record it refers to;
- `branch` (`_composed`): "if it is reserved, cancel it; otherwise finish it": the gold follows
  the branch the record's state decides;
- `sweep` (`_sweeps`): every record of up to three sets ("cancel all my reserved stays, and settle
  all my open charges"), one write each;
- `triage` (`_sweeps`): each record of a set gets one of two changes by a condition on the record
  it refers to (read one by one);
- `tally` (`_aggregates`): how many records and their total (answer facts), then a change on the
  one the ranking picks;
- `review` (`_reviews`): each record of a set read through its reference, and changed only where
  a condition on what was read holds;
- `errand` (`_errands`): two to four jobs for one user in one conversation (a pick or a review,
  then sweeps, picks or reviews on other records), its listings paged and its first write timing
  out (`_paging`): the agent pages, checks the record, and goes on; in half of those led by a pick,
  which record is a detail the user gives only when asked.

Dialogue kinds (`_dialogues`), picks that need a second user turn (`mcpsim.tasks._asking`):

- `ask`: which record is a detail the user gives only when asked;
- `change`: asked to confirm, the user changes which record; the gold follows the change;
- `decline`: asked to confirm, the user says no; the gold writes nothing.

The one-call kinds:

- `write` (`_writes`): one write that succeeds;
- `workflow` (`_workflows`): two writes, the second on a row the first wrote (or for the same person);
- `refusal` (`_refusals`): a write that a precondition or a state transition refuses: the agent
  looks the blocking record up and says why (the answer names the record and the blocking value);
- `lookup` (`_lookups`): a question about a record (a typed answer: money, date, count, name,
  id), or how many records of a kind match a filter;
- `recovery` (`_recovery`): a write the fault profile cuts short with the partial failure the
  spec declares; the agent checks the record instead of writing twice, and gives its id.

Instructions and personas (`_wording`) come from varied templates, chosen by a `Random` seeded by
the seed and the spec. The rubric (`_rubric`) has row checks from the gold solution's net changes,
`gold_state`, `allowed_changes`, answer facts (`_facts`), and process checks from the policy rules
(an identity lookup before writes, confirmation before the writes a `confirm` rule lists).
Alternatives (a read before the write, the answer in other words) must pass and near misses
(another row, a missing step, a second write after a partial failure, a wrong answer) must fail
(`_alternatives`): `mcpsim check` and `mcpsim.acceptance._validate` run both.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Protocol, TypeVar

from mcpsim.audit import RATED, check_task
from mcpsim.engine import TemplateCache
from mcpsim.grading import Verifier
from mcpsim.specs import CompiledWorld, id_arg
from mcpsim.taskgen._alternatives import alternatives, near_misses
from mcpsim.taskgen._kinds import KINDS, PLAN_KINDS
from mcpsim.taskgen._ownership import acts_for_another
from mcpsim.taskgen._plan import Kind, Plan
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._rubric import rubric
from mcpsim.taskgen._wording import instruction, user
from mcpsim.tasks import CANARY_PREFIX, Action, Fact, Task, TaskFile, TaskSet

# The order the kinds' plans take turns in, over and over: the composed kinds (a target named by a
# property, several records, a total, a branch: chained calls) hold most turns, the longest (errands,
# sweeps) next when a kind runs out; the dialogue kinds (a detail told when asked, a change of mind,
# a declined change) a quarter (over a third of the tasks: the other kinds run out of plans sooner,
# and half the errands led by a pick ask too), the one-call kinds a few.
TURNS: tuple[Kind, ...] = (
    "errand",
    "ask",
    "review",
    "sweep",
    "errand",
    "change",
    "sweep",
    "errand",
    "decline",
    "review",
    "errand",
    "sweep",
    "triage",
    "ask",
    "errand",
    "change",
    "pick",
    "tally",
    "branch",
    "decline",
    "refusal",
    "pick",
    "branch",
    "workflow",
    "tally",
    "lookup",
    "write",
    "recovery",
)
MAX_CANDIDATES_PER_TASK = 4  # candidates tried per task asked for, before giving up

TASK_PROBLEMS = (  # how a problem `mcpsim check` finds begins, and the check it counts under (first match)
    (
        re.compile(r"a do-nothing agent passes|grading a do-nothing agent|check .* is labelled noop_passes"),
        "not_satisfied_at_start",
    ),
    (re.compile(r"the gold|two gold runs|gold action \d"), "gold_passes_twice"),
    (re.compile(r"the cheating baseline|an agent that gives up"), "baselines_fail"),
    (re.compile(r"the alternative"), "alternatives_pass"),
    (re.compile(r"the near miss"), "near_misses_fail"),
    (re.compile(r"a transcribing agent"), "not_trivial"),
    (re.compile(r"the wording lint"), "wording"),
)


class TaskGenerator:
    """Plans found on one seeded world, rendered as tasks."""

    def __init__(
        self,
        compiled: CompiledWorld,
        *,
        seed: int,
        scale: str,
        templates: TemplateCache | None = None,
        turns: Sequence[str] = TURNS,
        screen: Callable[[Task], list[str]] | None = None,
    ) -> None:
        self.compiled = compiled
        self.screen = screen  # a check run on each candidate before its audit (acceptance's wording lint)
        self.turns = tuple(turns)  # the order the kinds take turns in (`TURNS`)
        self.probe = WorldProbe(compiled, seed=seed, scale=scale, templates=templates)
        self.start = self.probe.start  # the seeded world every plan is found on
        self.kinds = {kind.name: kind for kind in PLAN_KINDS}
        self.dropped: Counter[str] = Counter()  # candidates `mcpsim check` refused, by the check of their first problem
        self.drawn = 0  # candidates drawn so far
        self._digest = hashlib.sha256()

    def close(self) -> None:
        self.probe.close()

    def task(self, plan: Plan, number: int) -> Task:
        """`plan` as a task numbered `number`: its gold solution (the identity lookup first), rubric,
        other solutions, simulated user and instruction, drawn from the seeded `Random` in order."""
        probe, kind = self.probe, self.kinds[plan.kind]
        gold = list(plan.actions)
        if plan.person is not None and probe.identity in probe.gets and not plan.identified:
            lookup = Action(tool=probe.gets[probe.identity].name, args={id_arg(probe.identity): plan.person})
            gold = [lookup, *(a for a in gold if a != lookup)]
        answer: list[Fact] = list(plan.facts)
        checks = rubric(probe, plan, kind, gold, answer)
        solutions = {
            "alternatives": alternatives(probe, plan, kind, gold, answer),
            "near_misses": near_misses(probe, plan, gold),
        }
        simulated = user(probe, plan, kind, gold)
        grading = {"gold": gold, "answer": answer, "rubric": checks, "volatile": probe.volatile}
        if plan.forbidden:
            grading["forbidden"] = list(plan.forbidden)
        labels = {"tags": [plan.kind, *plan.tags], "difficulty": kind.difficulty}
        episode = {"seed": probe.seed, "scale": probe.scale, "faults": plan.faults}
        name = f"{plan.kind}-{number:03d}-{plan.tags[0].replace('_', '-')}"
        words = instruction(probe, plan, kind)  # then the split: the seeded draws in their order
        split = probe.rng.choices(["train", "dev", "test"], weights=[6, 2, 2])[0]
        return Task(
            id=name,
            instruction=words,
            user=simulated,
            split=split,
            **episode,
            **grading,
            **solutions,
            **labels,
        )

    def candidates(self) -> Iterator[Task]:
        """Every candidate task, in the order `generate` tries them: the kinds in turn, each plan
        once. Each one drawn is counted in `drawn` and folded into `digest` (what another process
        must draw the same)."""
        sources: dict[str, Iterator[Plan]] = {kind.name: kind.plans(self.probe) for kind in PLAN_KINDS}
        for plan in plans_in_turn(sources, self.turns):
            if acts_for_another(self.probe, plan):  # another person's record: a refusal, never a gold
                continue
            task = self.task(plan, self.drawn + 1)
            self.drawn += 1
            self._digest.update(task.model_dump_json().encode())
            yield task

    @property
    def digest(self) -> str:
        """A digest of the candidates drawn so far, in order (the dropped ones too)."""
        return self._digest.hexdigest()[:16]

    def generate(self, count: int) -> list[Task]:
        """Up to `count` tasks, from at most `count * MAX_CANDIDATES_PER_TASK` candidates; a
        candidate that `mcpsim check` would refuse (see `sound`) is dropped and counted in `dropped`."""
        return keep_sound(self.candidates(), count, self.sound, self.dropped)

    def sound(self, task: Task) -> list[str]:
        """What `mcpsim check` finds wrong with a task: gold twice, do-nothing, the cheating
        baselines, the alternatives and near misses; and a task a transcribing agent passes (a
        `RATED` baseline: the world's rate is judged, so a generated task must not add to it).
        A candidate the `screen` refuses is not audited."""
        if self.screen is not None and (words := self.screen(task)):
            return [f"the wording lint refuses it: {problem}" for problem in words]
        tasks = task_set(self.compiled, [task])
        verifier = Verifier(self.compiled.world, tasks, templates=self.probe.templates)
        report = check_task(self.compiled.world, verifier, task, tasks.canaries)
        trivial = [name for name, result in report.baselines.items() if name in RATED and result.passed]
        return report.problems + [f"a transcribing agent ({name}) passes it" for name in trivial]


# -- module functions ---------------------------------------------------------------------------------


def generate_tasks(
    compiled: CompiledWorld, *, count: int = 10, seed: int = 0, scale: str | None = None, turns: Sequence[str] = TURNS
) -> list[Task]:
    """Up to `count` tasks over the world seeded with `seed` at `scale` (default: `small` if the
    spec has it, else `default`), the kinds taken in the order `turns` names them; the same
    arguments give the same tasks in any process."""
    scale = scale or ("small" if "small" in compiled.spec.scales else "default")
    generator = TaskGenerator(compiled, seed=seed, scale=scale, turns=turns)
    try:
        return generator.generate(count)
    finally:
        generator.close()


class Keyed(Protocol):
    def key(self) -> str: ...


P = TypeVar("P", bound=Keyed)


def plans_in_turn(sources: Mapping[str, Iterator[P]], turns: Sequence[str] | None = None) -> Iterator[P]:
    """The plans of each source in turn, each key once, until every source is spent: one of
    each kind a round, or a round in the order `turns` names the kinds (a kind named twice
    takes two turns; one it does not name, none)."""
    live = dict(sources)
    order = list(turns) if turns is not None else list(live)
    seen: set[str] = set()
    while any(kind in live for kind in order):
        for kind in order:
            if kind not in live:
                continue
            plan = next(live[kind], None)
            if plan is None:
                del live[kind]
            elif plan.key() not in seen:
                seen.add(plan.key())
                yield plan


def keep_sound(
    candidates: Iterable[Task], count: int, sound: Callable[[Task], list[str]], dropped: Counter[str]
) -> list[Task]:
    """Up to `count` of `candidates` in which `sound` finds no problem, from at most
    `count * MAX_CANDIDATES_PER_TASK` of them; a refused one is counted in `dropped` under the
    check its first problem fails (`task_check`)."""
    tasks: list[Task] = []
    if count <= 0:
        return tasks
    for drawn, task in enumerate(candidates, 1):
        problems = sound(task)
        if problems:
            dropped[task_check(problems[0])] += 1
        else:
            tasks.append(task)
        if len(tasks) == count or drawn >= count * MAX_CANDIDATES_PER_TASK:
            break
    return tasks


def candidates_digest(compiled: CompiledWorld, *, count: int, seed: int = 0, scale: str = "small") -> str:
    """The digest of the first `count` candidate tasks (`TaskGenerator.digest`), drawn without
    auditing them: what another process compares with a generator's, cheaply."""
    generator = TaskGenerator(compiled, seed=seed, scale=scale)
    try:
        for _ in zip(range(count), generator.candidates(), strict=False):
            pass
        return generator.digest
    finally:
        generator.close()


def task_check(problem: str) -> str:
    """The check a problem `mcpsim check` found in a task counts under."""
    return next((check for start, check in TASK_PROBLEMS if start.match(problem)), "task_well_formed")


def canary(compiled: CompiledWorld) -> str:
    return f"{CANARY_PREFIX}-{hashlib.sha256(('canary' + compiled.spec.digest()).encode()).hexdigest()[:24]}"


def task_set(compiled: CompiledWorld, tasks: list[Task]) -> TaskSet:
    """Generated tasks as a world's task set (one file, with a canary derived from the spec)."""
    return TaskSet(
        world=compiled.world.name, files=[TaskFile(world=compiled.world.name, canary=canary(compiled), tasks=tasks)]
    )


__all__ = [
    "KINDS",
    "PLAN_KINDS",
    "TASK_PROBLEMS",
    "TURNS",
    "TaskGenerator",
    "candidates_digest",
    "generate_tasks",
    "plans_in_turn",
    "keep_sound",
    "task_check",
    "task_set",
]
