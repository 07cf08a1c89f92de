"""Errand tasks (`ERRAND`): two composed jobs for one user in one conversation: "First, pay my
pending order for the book with the lowest price. Second, cancel all my reserved stays." A pick
or a branch (`_composed`), then a sweep (`_sweeps`) on other records of the same user; the user
is found and verified once. Doing only the first job is the near miss."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice

from mcpsim.taskgen._composed import branch_plans, pick_plans
from mcpsim.taskgen._plan import Plan, PlanKind
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._sweeps import sweep_plans
from mcpsim.taskgen._targets import runs
from mcpsim.taskgen._wording import GREETING_SLOT

FIRST_JOBS = 8  # picks and branches gathered to pair with sweeps
ERRAND_TEMPLATES = (
    "{greeting}, this is {name}. I have two things for you. First, {first}. Second, {second}.",
    "{greeting}, {name} here. Please {first}. Once that is done, {second}.",
    "{greeting}. My name is {name}, and I need two things: {first}; and then {second}.",
)


def errand_plans(probe: WorldProbe) -> Iterator[Plan]:
    firsts: list[Plan] = [*islice(pick_plans(probe), FIRST_JOBS // 2), *islice(branch_plans(probe), FIRST_JOBS // 2)]
    firsts = probe.shuffled(firsts)
    for second in sweep_plans(probe):
        for first in firsts:
            if first.person != second.person or not first.asks or not second.asks:
                continue
            written = {str(a.args) for a in first.actions if probe.world.tools[a.tool].writes}
            later = [a for a in second.actions[2:] if str(a.args) not in written]
            gold = [*first.actions, *later]
            if len(later) < len(second.actions) - 2 or not runs(probe, gold):
                continue
            name = str(first.knows["name"]) if first.knows else ""
            firsts.remove(first)
            yield Plan(
                "errand",
                gold,
                person=first.person,
                question=probe.rng.choice(ERRAND_TEMPLATES).format(
                    greeting=GREETING_SLOT, name=name, first=first.asks[0].request, second=second.asks[0].request
                ),
                near_miss=("does only the first job", first.actions, None),
                tags=[*first.tags[:1], *second.tags[:1]],
                identified=True,
                knows=first.knows,
            )
            break


ERRAND = PlanKind(
    name="errand",
    plans=errand_plans,
    difficulty="hard",
    wants="Both jobs done, each on the records the request describes.",
    instruction="question",
    changes=True,
    read_first=True,
)
