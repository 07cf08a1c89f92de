"""Sweep tasks (`sweep`): one job over several records, named by a property: "cancel all my
reserved stays, and settle all my open charges". The user gives their name; the agent finds
them, lists each set of records (every page) and acts on each record it shows. The gold does one
write per record; leaving the last one undone is the near miss. The users with the most records
are tried first (the longest sweeps), and every sweep meets faults: its listings show
`_paging.PAGE` records at a time and its first write times out (`_paging.met`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from mcpsim.specs import ActionSpec
from mcpsim.taskgen._composed import Rank, ranks
from mcpsim.taskgen._paging import met
from mcpsim.taskgen._plan import Ask, Plan
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._targets import (
    Me,
    Owned,
    act,
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
from mcpsim.taskgen._wording import GREETING_SLOT
from mcpsim.tasks import Action

MOST_GROUPS = 3  # sets of records one sweep acts on
FAULTY_SHARE = 1.0  # sweeps whose listings are paged and whose first write times out
SWEEP_TEMPLATES = (
    "{greeting}, this is {name}. Please {requests}.",
    "{greeting}, {name} here. I need you to {requests}.",
    "{greeting}. My name is {name}. Could you {requests}? Thanks.",
)


@dataclass(frozen=True)
class Group:
    """The user's records of one kind in one state, and the write done to each."""

    kind: Owned
    state: str
    action: ActionSpec
    keys: tuple[str, ...]

    def actions(self, probe: WorldProbe, person: str) -> list[Action]:
        return [*listing(probe, self.kind, person, self.state), *(act(probe, self.action, k) for k in self.keys)]

    def request(self, probe: WorldProbe) -> str:
        many = len(self.keys) > 1
        who = "all my" if many else "my"
        return verb(probe, self.action, f"{who} {words(self.state)} {self.kind.label(probe, many)}")


def sweep_plans(probe: WorldProbe) -> Iterator[Plan]:
    kinds = [k for k in owned(probe) if k.state is not None and transitions(probe, k.entity)]
    people = probe.shuffled(list(dict.fromkeys(p for k in kinds for p in owners(probe, k))))
    people.sort(key=lambda p: -sum(len(records(probe, k, p)) for k in kinds))  # the most records first
    for person in people:
        me = find_me(probe, person)
        if me is None:
            continue
        plan = _sweep(probe, me, kinds)
        if plan is not None:
            yield plan


def groups_of(probe: WorldProbe, me: Me, kinds: list[Owned]) -> list[Group]:
    """Every set of the user's records (one kind, one state) that one write applies to, each
    record on its own."""
    found: list[Group] = []
    for kind in kinds:
        rows = records(probe, kind, me.person)
        for state in sorted({str(r[kind.state or ""]) for r in rows}):
            keys = tuple(str(r["id"]) for r in rows if r[kind.state or ""] == state)
            for action in probe.shuffled(transitions(probe, kind.entity)):
                if all(runs(probe, [*me.actions, act(probe, action, k)]) for k in keys):
                    found.append(Group(kind, state, action, keys))
                    break
    return found


def _sweep(probe: WorldProbe, me: Me, kinds: list[Owned]) -> Plan | None:
    groups = probe.shuffled(groups_of(probe, me, kinds))
    groups.sort(key=lambda g: -len(g.keys))  # the largest sets first (a stable sort: ties stay shuffled)
    chosen: list[Group] = []
    for group in groups:
        if any(g.kind == group.kind and g.state == group.state for g in chosen):
            continue
        trial = [*chosen, group]
        if runs(probe, [*me.actions, *(a for g in trial for a in g.actions(probe, me.person))]):
            chosen = trial
        if len(chosen) == MOST_GROUPS:
            break
    if sum(len(g.keys) for g in chosen) < 2:
        return None
    gold = [*me.actions, *(a for g in chosen for a in g.actions(probe, me.person))]
    miss, faults = gold[:-1], None
    if probe.rng.random() < FAULTY_SHARE:  # paged listings and a write that times out (`_paging.met`)
        gold, miss, faults = met(probe, gold, miss)
    requests = ", and ".join(g.request(probe) for g in chosen)
    return Plan(
        "sweep",
        gold,
        faults=faults,
        person=me.person,
        asks=[Ask(requests, "")],
        question=probe.rng.choice(SWEEP_TEMPLATES).format(greeting=GREETING_SLOT, name=me.name, requests=requests),
        near_miss=("leaves the last record undone", miss, None),
        tags=[chosen[0].action.name, *(g.action.name for g in chosen[1:])],
        knows=me.knows,
    )


# -- triage: a sweep whose change depends on each record --------------------------------------------

TRIAGE_TEMPLATES = (
    "{greeting}, this is {name}. Please go through my {things}: where {condition}, {yes}; for the others, {no}.",
    "{greeting}, {name} here. For each of my {things}: if {condition}, {yes}; otherwise {no}.",
)


def triage_plans(probe: WorldProbe) -> Iterator[Plan]:
    kinds = [k for k in owned(probe) if k.state is not None and len(transitions(probe, k.entity)) >= 2]
    for kind in probe.shuffled(kinds):
        for person in owners(probe, kind):
            me = find_me(probe, person)
            plan = _triage(probe, kind, me) if me is not None else None
            if plan is not None:
                yield plan
                break


def _triage(probe: WorldProbe, kind: Owned, me: Me) -> Plan | None:
    rows = records(probe, kind, me.person)
    for state in probe.shuffled(sorted({str(r[kind.state or ""]) for r in rows})):
        group = [r for r in rows if r[kind.state or ""] == state]
        if len(group) < 3:
            continue
        applies = [
            a
            for a in transitions(probe, kind.entity)
            if all(runs(probe, [*me.actions, act(probe, a, r["id"])]) for r in group)
        ]
        if len(applies) < 2:
            continue
        first, second = probe.shuffled(applies)[:2]
        ranks_ = sorted(ranks(probe, kind.entity), key=lambda r: r.via is None)  # through a reference first
        for rank in ranks_:
            values = [rank.value(probe, r) for r in group]
            distinct = sorted(set(values)) if None not in values else []
            if len(distinct) < 2:
                continue
            cut = distinct[probe.rng.randrange(len(distinct) - 1)]
            above = [r for r, v in zip(group, values, strict=True) if v > cut]
            reads = [*me.actions, *listing(probe, kind, me.person, state), *rank.reads(probe, group)]
            writes = [act(probe, first if r in above else second, r["id"]) for r in group]
            if not runs(probe, [*reads, *writes]):
                continue
            flipped = [act(probe, second if r in above else first, r["id"]) for r in group]
            return Plan(
                "triage",
                [*reads, *writes],
                person=me.person,
                question=probe.rng.choice(TRIAGE_TEMPLATES).format(
                    greeting=GREETING_SLOT,
                    name=me.name,
                    things=f"{words(state)} {kind.label(probe, True)}",
                    condition=_condition(probe, kind, rank, cut),
                    yes=verb(probe, first, "it"),
                    no=verb(probe, second, "it"),
                ),
                near_miss=("swaps the two changes", [*reads, *flipped], None),
                tags=[first.name, second.name, "by_" + rank.field],
                knows=me.knows,
            )
    return None


def _condition(probe: WorldProbe, kind: Owned, rank: Rank, cut: object) -> str:
    """ "its book's price is more than $12.00": the test a record passes to get the first change."""
    owner = f"its {probe.spec.label_of(rank.via_entity or '').lower()}'s " if rank.via else "its "
    if rank.kind == "money":
        shown = f"${int(str(cut)) / 100:,.2f}"
    else:
        shown = str(cut)[:10]
    word = "after" if rank.kind == "date" else "more than"
    return f"{owner}{rank.noun(probe)} is {word} {shown}"
