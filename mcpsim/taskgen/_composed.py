"""Composed tasks that name their target by a property (`pick`, `branch`): the user gives their
name, never an id; the agent finds them, lists their records and reads the one to act on.

- `pick`: "cancel my pending order for the book with the highest price": the records of one
  state, ranked by one of their amounts, counts or dates, or by one of the record each refers to
  (read one by one); the gold acts on the top one, the near miss on the runner-up.
- `branch`: "look at my rental with the latest start: if it is reserved, cancel it; otherwise
  finish it": the gold follows the branch the record's state decides; the near miss takes the
  other one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mcpsim.specs import ActionSpec, id_arg
from mcpsim.taskgen._paging import met
from mcpsim.taskgen._plan import Ask, Plan
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._targets import (
    Me,
    Owned,
    act,
    field_noun,
    find_me,
    first_that_runs,
    listing,
    owned,
    owners,
    ranked_fields,
    records,
    runs,
    transitions,
    verb,
    words,
)
from mcpsim.taskgen._wording import GREETING_SLOT
from mcpsim.tasks import Action

TOP_WORDS = {"money": ("highest", "lowest"), "float": ("highest", "lowest"), "int": ("largest", "smallest")}
TOP_WORDS["date"] = ("latest", "earliest")
PICK_TEMPLATES = (
    "{greeting}, this is {name}. Could you {request}?",
    "{greeting}, {name} here. Please {request}.",
    "{greeting}. My name is {name}; I'd like you to {request}.",
)
BRANCH_TEMPLATES = (
    "{greeting}, this is {name}. Please look at {thing}: if it is {state}, {yes}; otherwise {no}.",
    "{greeting}, {name} here. Check {thing} for me. If it is {state}, {yes}. If not, {no}.",
)


@dataclass(frozen=True)
class Rank:
    """What records are ranked by: a field of their own, or of the record `via` refers to."""

    entity: str  # the ranked records' entity
    field: str
    kind: str  # the field's type
    via: str | None = None  # the reference field read through
    via_entity: str | None = None

    def value(self, probe: WorldProbe, row: dict[str, Any]) -> Any:
        if self.via is None:
            return row.get(self.field)
        other = probe.row(self.via_entity or "", row.get(self.via))
        return other.get(self.field) if other else None

    def reads(self, probe: WorldProbe, rows: list[dict[str, Any]]) -> list[Action]:
        """The lookups of the referred records (each once, in the order the rows show them)."""
        if self.via is None or self.via_entity not in probe.gets:
            return []
        keys = list(dict.fromkeys(str(r[self.via]) for r in rows if r.get(self.via) is not None))
        get = probe.gets[self.via_entity or ""]
        return [Action(tool=get.name, args={id_arg(self.via_entity or ""): k}) for k in keys]

    def phrase(self, probe: WorldProbe, top: bool) -> str:
        word = TOP_WORDS[self.kind][0 if top else 1]
        if self.via is None:
            return f"with the {word} {self.noun(probe)}"
        label = probe.spec.label_of(self.via_entity or "").lower()
        return f"for the {label} with the {word} {self.noun(probe)}"

    def noun(self, probe: WorldProbe) -> str:
        return field_noun(probe, self.via_entity or self.entity, self.field)


def ranks(probe: WorldProbe, entity: str, *, through: bool = True) -> list[Rank]:
    """The ranks of `entity`'s records: its own fields, then those of the records it refers to
    (other than the user) that the world can look up."""
    fields = probe.spec.entities[entity].fields
    found = [Rank(entity, n, fields[n].type) for n in ranked_fields(probe, entity)]
    if through:
        for name, f in fields.items():
            if f.type == "ref" and f.entity and f.entity != probe.identity and f.entity in probe.gets:
                found += [
                    Rank(entity, n, probe.spec.entities[f.entity].fields[n].type, name, f.entity)
                    for n in ranked_fields(probe, f.entity)
                ]
    return found


def through_first(probe: WorldProbe, found: list[Rank]) -> list[Rank]:
    """`found` shuffled, the ranks read through a reference first (the agent reads each record
    the ones it ranks refer to)."""
    return sorted(probe.shuffled(found), key=lambda r: r.via is None)


def ordered(probe: WorldProbe, rank: Rank, rows: list[dict[str, Any]], top: bool) -> list[dict[str, Any]] | None:
    """`rows` from the first by `rank` (highest or lowest) on, or None if a value is missing or
    the first two tie."""
    values = [rank.value(probe, r) for r in rows]
    if any(v is None for v in values):
        return None
    pairs = sorted(zip(values, range(len(rows)), strict=True), key=lambda p: (p[0], p[1]), reverse=top)
    if len(pairs) < 2 or pairs[0][0] == pairs[1][0]:
        return None
    return [rows[i] for _, i in pairs]


def people(probe: WorldProbe) -> Iterator[tuple[Owned, Me]]:
    """Each owned kind of record with a state, and each person owning several, found by name."""
    for kind in probe.shuffled(owned(probe)):
        if kind.state is None or not transitions(probe, kind.entity):
            continue
        for person in owners(probe, kind):
            me = find_me(probe, person)
            if me is not None:
                yield kind, me


# -- pick -----------------------------------------------------------------------------------------


def pick_plans(probe: WorldProbe) -> Iterator[Plan]:
    for kind, me in people(probe):
        plan = _pick(probe, kind, me)
        if plan is not None:
            yield plan


@dataclass(frozen=True)
class Picked:
    """A user's records of one state, ranked: `order` from the first by `rank`, `low` the other
    way; `reads` find the user, list the records and read what ranks them; `action` runs on the first."""

    kind: Owned
    me: Me
    state: str
    action: ActionSpec
    rank: Rank
    top: bool
    order: list[dict[str, Any]]
    low: list[dict[str, Any]] | None
    reads: list[Action]

    def thing(self, probe: WorldProbe) -> str:
        return f"my {words(self.state)} {self.kind.label(probe)} {self.rank.phrase(probe, self.top)}"

    def gold(self, probe: WorldProbe) -> list[Action]:
        return [*self.reads, act(probe, self.action, self.order[0]["id"])]


def pick_one(probe: WorldProbe, kind: Owned, me: Me) -> Picked | None:
    """The first of `me`'s records of one state (two or more), ranked by a field, on which a
    transition of theirs runs; None if no state, action and rank give one."""
    rows = records(probe, kind, me.person)
    for state in probe.shuffled(sorted({str(r[kind.state or ""]) for r in rows})):
        group = [r for r in rows if r[kind.state or ""] == state]
        if len(group) < 2:
            continue
        for action in probe.shuffled(transitions(probe, kind.entity)):
            for rank in through_first(probe, ranks(probe, kind.entity)):
                top = probe.rng.random() < 0.5
                order = ordered(probe, rank, group, top)
                if order is None:
                    continue
                reads = [*me.actions, *listing(probe, kind, me.person, state), *rank.reads(probe, group)]
                if not runs(probe, [*reads, act(probe, action, order[0]["id"])]):
                    break  # the action does not apply to this state: try another action
                low = ordered(probe, rank, group, not top)
                return Picked(kind, me, state, action, rank, top, order, low, reads)
    return None


def _pick(probe: WorldProbe, kind: Owned, me: Me) -> Plan | None:
    p = pick_one(probe, kind, me)
    if p is None:
        return None
    request = verb(probe, p.action, p.thing(probe))
    gold, miss, faults = met(probe, p.gold(probe), another_record(probe, p.reads, p.action, p.order[1:]))
    return Plan(
        "pick",
        gold,
        person=me.person,
        asks=[Ask(request, "")],
        question=probe.rng.choice(PICK_TEMPLATES).format(greeting=GREETING_SLOT, name=me.name, request=request),
        faults=faults,
        near_miss=("acts on another record", miss, None),
        tags=[p.action.name, "by_" + p.rank.field],
        knows=me.knows,
    )


# -- branch ---------------------------------------------------------------------------------------


def branch_plans(probe: WorldProbe) -> Iterator[Plan]:
    for kind, me in people(probe):
        plan = _branch(probe, kind, me)
        if plan is not None:
            yield plan


def _branch(probe: WorldProbe, kind: Owned, me: Me) -> Plan | None:
    rows = records(probe, kind, me.person)
    machine = probe.spec.entities[kind.entity].state_machine
    if len(rows) < 2 or machine is None:
        return None
    actions = transitions(probe, kind.entity)
    for rank in through_first(probe, ranks(probe, kind.entity)):
        top = probe.rng.random() < 0.5
        order = ordered(probe, rank, rows, top)
        if order is None:
            continue
        target = order[0]
        reads = [*me.actions, *listing(probe, kind, me.person), *rank.reads(probe, rows)]
        applies = [a for a in actions if runs(probe, [*reads, act(probe, a, target["id"])])]
        if not applies:
            continue
        done = probe.rng.choice(applies)
        state = str(target[kind.state or ""])
        # the other branch: a state the record is not in, and a change that record would take from it
        choices = [
            (s, a)
            for a in actions
            if a.name != done.name
            for s in sorted(machine.transitions)
            if s != state and a.to in machine.transitions[s] and a.to != s
        ]
        if not choices:
            continue
        asked, other = probe.rng.choice(choices)
        holds = probe.rng.random() < 0.5
        if holds:
            asked = state
        yes, no = (done, other) if holds else (other, done)
        thing = f"my {kind.label(probe)} {rank.phrase(probe, top)}"
        said = f"look at {thing}: if it is {words(asked)}, {_on_it(probe, yes)}; otherwise {_on_it(probe, no)}"
        return Plan(
            "branch",
            [*reads, act(probe, done, target["id"])],
            person=me.person,
            asks=[Ask(said, "")],
            question=probe.rng.choice(BRANCH_TEMPLATES).format(
                greeting=GREETING_SLOT,
                name=me.name,
                thing=thing,
                state=words(asked),
                yes=_on_it(probe, yes),
                no=_on_it(probe, no),
            ),
            near_miss=(
                "takes the other branch",
                first_that_runs(
                    probe, reads, [act(probe, other, target["id"]), *(act(probe, done, r["id"]) for r in order[1:])]
                ),
                None,
            ),
            tags=[done.name, "if_" + asked],
            knows=me.knows,
        )
    return None


def another_record(
    probe: WorldProbe, reads: list[Action], action: ActionSpec, rows: list[dict[str, Any]]
) -> list[Action]:
    """The near miss of a pick: the same change on the next record that takes it."""
    return first_that_runs(probe, reads, [act(probe, action, r["id"]) for r in rows])


def _on_it(probe: WorldProbe, action: ActionSpec) -> str:
    return verb(probe, action, "it")
