"""Review tasks (`review`): a set of the user's records gone through one by one, each read before
a change that only some of them get: "go through my reserved stays and cancel each one whose
site's price is more than $40.00; leave the others as they are". The condition is on the record
each one refers to, so the agent lists the set (every page), reads each referred record, and
changes the ones that pass. Changing every record of the set is the near miss (or, when that
cannot run, leaving the last change undone).

`review_one` is also the first job of an errand (`_errands`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from mcpsim.specs import ActionSpec, id_arg
from mcpsim.taskgen._composed import Rank, people, ranks
from mcpsim.taskgen._paging import met
from mcpsim.taskgen._plan import Ask, Plan
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._targets import Me, Owned, act, listing, records, runs, transitions, verb, words
from mcpsim.taskgen._wording import GREETING_SLOT
from mcpsim.tasks import Action

LEAST_RECORDS = 3  # records in the set gone through
REVIEW_TEMPLATES = (
    "{greeting}, this is {name}. Please {request}.",
    "{greeting}, {name} here. Could you {request}? Thanks.",
    "{greeting}. My name is {name}. I'd like you to {request}.",
)


@dataclass(frozen=True)
class Reviewed:
    """A set of the user's records (one kind, one state), each read through its reference in
    `steps` and changed by `action` where `condition` holds (`chosen`)."""

    kind: Owned
    state: str
    action: ActionSpec
    condition: str  # "its site's price is more than $40.00"
    field: str  # the referred record's field the condition is on
    steps: tuple[Action, ...]  # the listing, then each record's read and (where it holds) its change
    chosen: tuple[str, ...]  # the records changed
    others: tuple[str, ...]  # the records left as they are

    def request(self, probe: WorldProbe) -> str:
        things = f"{words(self.state)} {self.kind.label(probe, True)}"
        change = verb(probe, self.action, "each one")
        return f"go through my {things} and {change} where {self.condition}, but only those"


def review_one(probe: WorldProbe, kind: Owned, me: Me) -> Reviewed | None:
    """A set of three or more of `me`'s records of one state that one change applies to, split by
    a condition on the records they refer to; None if no state, change and rank give one."""
    rows = records(probe, kind, me.person)
    for state in probe.shuffled(sorted({str(r[kind.state or ""]) for r in rows})):
        group = [r for r in rows if r[kind.state or ""] == state]
        if len(group) < LEAST_RECORDS:
            continue
        for action in probe.shuffled(transitions(probe, kind.entity)):
            if not all(runs(probe, [*me.actions, act(probe, action, r["id"])]) for r in group):
                continue
            found = _split(probe, kind, me, state, action, group)
            if found is not None:
                return found
    return None


def _split(
    probe: WorldProbe, kind: Owned, me: Me, state: str, action: ActionSpec, group: list[dict[str, object]]
) -> Reviewed | None:
    for rank in probe.shuffled([r for r in ranks(probe, kind.entity) if r.via is not None]):
        values = [rank.value(probe, r) for r in group]
        if None in values or len(set(values)) < 2 or rank.via_entity not in probe.gets:
            continue
        distinct = sorted(set(values))
        cut = distinct[probe.rng.randrange(len(distinct) - 1)]
        steps: list[Action] = list(listing(probe, kind, me.person, state))
        read: set[str] = set()
        chosen: list[str] = []
        for row, value in zip(group, values, strict=True):
            key = str(row[rank.via or ""])
            if key not in read:  # each referred record read once, before the change it decides
                read.add(key)
                steps.append(
                    Action(tool=probe.gets[rank.via_entity or ""].name, args={id_arg(rank.via_entity or ""): key})
                )
            if value > cut:
                chosen.append(str(row["id"]))
                steps.append(act(probe, action, row["id"]))
        if not runs(probe, [*me.actions, *steps]):
            continue
        others = tuple(str(r["id"]) for r in group if str(r["id"]) not in chosen)
        condition = _condition(probe, rank, cut)
        return Reviewed(kind, state, action, condition, rank.field, tuple(steps), tuple(chosen), others)
    return None


def _condition(probe: WorldProbe, rank: Rank, cut: object) -> str:
    """ "its site's price is more than $40.00": the test a record passes to be changed."""
    owner = f"its {probe.spec.label_of(rank.via_entity or '').lower()}'s"
    shown = f"${int(str(cut)) / 100:,.2f}" if rank.kind == "money" else str(cut)[:10]
    word = "later than" if rank.kind == "date" else "more than"
    return f"{owner} {rank.noun(probe)} is {word} {shown}"


def review_plans(probe: WorldProbe) -> Iterator[Plan]:
    for kind, me in people(probe):
        found = review_one(probe, kind, me)
        if found is not None:
            yield _review(probe, me, found)


def _review(probe: WorldProbe, me: Me, r: Reviewed) -> Plan:
    gold = [*me.actions, *r.steps]
    every = [*gold, *(act(probe, r.action, k) for k in r.others)]
    if runs(probe, every):
        miss = ("changes every record, not only the ones the condition picks", every[len(me.actions) :])
    else:
        last = max(i for i, a in enumerate(gold) if probe.world.tools[a.tool].writes)
        miss = ("leaves the last change undone", [*gold[len(me.actions) : last], *gold[last + 1 :]])
    gold, missed, faults = met(probe, gold, [*me.actions, *miss[1]])
    request = r.request(probe)
    return Plan(
        "review",
        gold,
        faults=faults,
        person=me.person,
        asks=[Ask(request, "")],
        question=probe.rng.choice(REVIEW_TEMPLATES).format(greeting=GREETING_SLOT, name=me.name, request=request),
        near_miss=(miss[0], missed, None),
        tags=[r.action.name, "if_" + r.field],
        knows=me.knows,
    )
