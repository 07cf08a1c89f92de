"""Write tasks (`write`): one write that succeeds, asked for with its details; the same change
on another record is the near miss."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpsim.taskgen._plan import PLAN_ROUNDS, Plan
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._wording import ask
from mcpsim.tasks import Action


def write_plans(probe: WorldProbe) -> Iterator[Plan]:
    """One write per action, then a second round on other arguments."""
    found = {action.name: probe.successes(action, probe.start) for action in probe.shuffled(probe.writes)}
    for round in range(PLAN_ROUNDS):
        for action in probe.writes:
            successes = found[action.name]
            if len(successes) <= round:
                continue
            args = successes[round]
            other = next((a for a in successes if _differs(a, args)), None)
            near = (
                ("the same change on another record", [Action(tool=action.name, args=other)], None) if other else None
            )
            yield Plan(
                "write",
                [Action(tool=action.name, args=args)],
                person=probe.person(action, args, probe.start),
                asks=[ask(probe, action, args)],
                near_miss=near,
                tags=[action.name],
            )


def _differs(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return any(a.get(k) != v for k, v in b.items())
