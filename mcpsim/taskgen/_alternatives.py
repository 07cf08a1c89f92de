"""A generated task's other solutions: alternatives that must pass (a read before the write,
the answer in other words: `reworded`) and near misses that must fail (the plan's own near
miss, a wrong answer). `mcpsim check` and `mcpsim.acceptance._validate` run both."""

from __future__ import annotations

from datetime import date

from mcpsim.specs import id_arg
from mcpsim.taskgen._facts import stated
from mcpsim.taskgen._plan import Plan, PlanKind
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.tasks import (
    Action,
    DateFact,
    Fact,
    IdFact,
    MoneyFact,
    PhraseFact,
    Say,
    Solution,
    Step,
    confirmation_question,
)


def alternatives(
    probe: WorldProbe, plan: Plan, kind: PlanKind, gold: list[Action], answer: list[Fact]
) -> list[Solution]:
    found: list[Solution] = []
    if kind.read_first:
        first_write = next(a for a in gold if probe.world.tools[a.tool].writes)
        entity = next(a.entity for a in probe.spec.actions if a.name == first_write.tool)
        get = probe.gets.get(entity)
        key = first_write.args.get(id_arg(entity))
        if get is not None and key is not None:
            read = Action(tool=get.name, args={id_arg(entity): key})
            found.append(Solution(name="reads the record before changing it", steps=_steps(probe, [read, *gold])))
    if answer and kind.reworded:
        found.append(Solution(name="states the answer in other words", answer=reworded(answer)))
    return found


def near_misses(probe: WorldProbe, plan: Plan, gold: list[Action]) -> list[Solution]:
    misses: list[Solution] = []
    if plan.near_miss is not None:
        name, actions, answer = plan.near_miss
        reads = [a for a in gold if a not in plan.actions]
        misses.append(Solution(name=name, steps=_steps(probe, [*reads, *actions]), answer=answer))
    if plan.wrong_answer is not None:
        misses.append(Solution(name="answers with a wrong value", answer=plan.wrong_answer))
    return misses + plan.misses


def _steps(probe: WorldProbe, actions: list[Action]) -> list[Step]:
    """Solution steps with the request for the go-ahead, naming the writes the policy wants
    confirmed, before the first of them (as `gold_steps` puts it before the gold solution's)."""
    needed = [a for a in actions if a.tool in probe.confirm and probe.world.tools[a.tool].writes]
    steps: list[Step] = list(actions)
    if needed:
        steps.insert(actions.index(needed[0]), Say(say=confirmation_question(needed)))
    return steps


def reworded(facts: list[Fact]) -> str:
    """The facts stated another way than the oracle does (money in words, dates spelled out)."""
    parts = []
    for fact in facts:
        if isinstance(fact, MoneyFact):
            parts.append(f"{fact.money:.2f} dollars")
        elif isinstance(fact, DateFact):
            day = date.fromisoformat(fact.date)
            parts.append(f"{day:%B} {day.day}, {day.year}")
        elif isinstance(fact, IdFact):
            parts.append(f"record {fact.id}")
        elif isinstance(fact, PhraseFact):
            parts.append(f"it is {fact.phrase}")
        else:
            parts.append(str(stated(fact)))
    return "Here is what I found: " + ", and ".join(parts) + "."
