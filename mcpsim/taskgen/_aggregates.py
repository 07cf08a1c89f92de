"""Tally tasks (`tally`): an aggregate over the user's records, answered as facts, and used to
pick the record to act on: "how many open invoices do I have and what do they come to in
total? Then pay the largest one." The user gives their name; the agent finds them, lists the
records (every page), adds them up and acts on the one the ranking picks. A wrong total is the
near miss, and so is acting on the runner-up."""

from __future__ import annotations

from collections.abc import Iterator

from mcpsim.taskgen._composed import Rank, another_record, ordered
from mcpsim.taskgen._plan import Plan
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._targets import (
    Me,
    Owned,
    act,
    field_noun,
    find_me,
    listing,
    owned,
    owners,
    records,
    runs,
    transitions,
    verb,
    words,
)
from mcpsim.taskgen._wording import GREETING_SLOT, singular
from mcpsim.tasks import CountFact, MoneyFact

TALLY_TEMPLATES = (
    "{greeting}, this is {name}. How many {things} do I have, and what is their {field} in total? {then}",
    "{greeting}, {name} here. Could you add up the {field} of my {things} and tell me how many there are? {then}",
)
THEN_TEMPLATES = ("Then please {request}.", "After that, {request}.")


def tally_plans(probe: WorldProbe) -> Iterator[Plan]:
    for kind in probe.shuffled(owned(probe)):
        fields = probe.spec.entities[kind.entity].fields
        money = [n for n, f in fields.items() if f.type == "money" and not f.optional]
        if kind.state is None or not money:
            continue
        for person in owners(probe, kind):
            me = find_me(probe, person)
            plan = _tally(probe, kind, me, probe.rng.choice(money)) if me is not None else None
            if plan is not None:
                yield plan
                break


def _tally(probe: WorldProbe, kind: Owned, me: Me, field: str) -> Plan | None:
    rows = records(probe, kind, me.person)
    for state in probe.shuffled(sorted({str(r[kind.state or ""]) for r in rows})):
        group = [r for r in rows if r[kind.state or ""] == state]
        top = probe.rng.random() < 0.5
        order = ordered(probe, Rank(kind.entity, field, "money"), group, top)
        if order is None:
            continue
        reads = [*me.actions, *listing(probe, kind, me.person, state)]
        total = sum(int(r[field]) for r in group)
        for action in probe.shuffled(transitions(probe, kind.entity)):
            gold = [*reads, act(probe, action, order[0]["id"])]
            if not runs(probe, gold):
                continue
            things = f"{words(state)} {kind.label(probe, True)}"
            request = verb(probe, action, f"the one {Rank(kind.entity, field, 'money').phrase(probe, top)}")
            then = probe.rng.choice(THEN_TEMPLATES).format(request=request)
            return Plan(
                "tally",
                gold,
                person=me.person,
                facts=[MoneyFact(money=total / 100), CountFact(count=len(group), noun=singular(kind.label(probe)))],
                question=probe.rng.choice(TALLY_TEMPLATES).format(
                    greeting=GREETING_SLOT,
                    name=me.name,
                    things=things,
                    field=field_noun(probe, kind.entity, field),
                    then=then,
                ),
                near_miss=("acts on another record", another_record(probe, reads, action, order[1:]), None),
                wrong_answer=f"You have {len(group)} of them, ${(total + int(order[0][field])) / 100:,.2f} in total.",
                tags=[action.name, "total_" + field],
                knows=me.knows,
            )
    return None
