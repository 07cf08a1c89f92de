"""Workflow tasks (`workflow`): two writes, the second on a row the first wrote (or for the same
person); doing only the first is the near miss."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpsim.engine import CallResult, Episode
from mcpsim.specs import ActionSpec, id_arg
from mcpsim.taskgen._plan import Plan
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._wording import ask
from mcpsim.tasks import Action

SECOND_STEP_TRIES = 12  # per action, for a workflow's second step


def workflow_plans(probe: WorldProbe) -> Iterator[Plan]:
    for first in probe.shuffled(probe.writes):
        if first.partial_failure is not None and first.kind == "create":
            continue
        for args in probe.successes(first, probe.start, 2):
            plan = _second_step(probe, first, args)
            if plan is not None:
                yield plan
                break


def _second_step(probe: WorldProbe, first: ActionSpec, args: dict[str, Any]) -> Plan | None:
    after = probe.start.fork(id="taskgen-workflow")
    try:
        result = after.call(first.name, args)
        # a list in the order of the changes, never a set: a set of strings iterates in an
        # order that changes with PYTHONHASHSEED, and `_outcomes_anchored` takes the first
        created = list(dict.fromkeys(c.key.strip('"[]') for c in result.changes if c.op == "insert"))
        touched = {str(v) for c in result.changes for v in (c.after or c.before or {}).values()} | {
            str(v) for v in args.values()
        }
        person = probe.person(first, args, probe.start)
        for second in probe.shuffled(probe.writes):
            if second.name == first.name or (second.partial_failure and second.kind == "create"):
                continue
            for args2, outcome in _outcomes_anchored(probe, second, after, created):
                if outcome.is_error or not outcome.changes:
                    continue
                related = {str(v) for v in args2.values()} & touched
                same_person = person is not None and probe.person(second, args2, after) == person
                if not related and not same_person:
                    continue
                steps = [Action(tool=first.name, args=args), Action(tool=second.name, args=args2)]
                return Plan(
                    "workflow",
                    steps,
                    person=person,
                    asks=[ask(probe, first, args), ask(probe, second, args2, created=created)],
                    near_miss=("only the first of the two changes", steps[:1], None),
                    tags=[first.name, second.name],
                )
    finally:
        after.close()
    return None


def _outcomes_anchored(
    probe: WorldProbe, action: ActionSpec, episode: Episode, created: list[str]
) -> Iterator[tuple[dict[str, Any], CallResult]]:
    """Calls on the rows just created first, then any."""
    key = id_arg(action.entity)
    new = [c for c in created if probe.row_in(episode, action.entity, c)]
    if new and key in {p.name for p in probe.world.tools[action.name].parameters}:
        for raw in probe.arguments.candidates(action, episode)[:SECOND_STEP_TRIES]:
            yield from probe.try_call(action, episode, raw | {key: new[0]})
    yield from probe.outcomes(action, episode, SECOND_STEP_TRIES)
