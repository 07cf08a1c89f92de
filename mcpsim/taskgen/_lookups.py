"""Lookup tasks (`lookup`): a question about a record (a typed answer: money, date, count, name,
id), or how many records of a kind match a filter; a wrong value is the near miss."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from mcpsim.specs import ActionSpec, id_arg
from mcpsim.taskgen._facts import fact, rivals, stated
from mcpsim.taskgen._plan import PLAN_ROUNDS, Plan
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._wording import GREETING_SLOT, ME_SLOT, plural, singular
from mcpsim.tasks import Action, CountFact, ToolCalled

LOOKUP_TEMPLATES = (
    "{greeting}{me}. What is the {what} of {label} {key}?",
    "{greeting}{me}. Could you tell me the {what} of {label} {key}?",
    "{greeting}{me}. I need the {what} on record for {label} {key}.",
)
COUNT_TEMPLATES = (
    "{greeting}{me}. How many {plural} {condition} are there?",
    "{greeting}{me}. Could you count the {plural} {condition} for me?",
)


def lookup_plans(probe: WorldProbe) -> Iterator[Plan]:
    """A field of a record, or a count, in turn; each round on other records."""
    counts = _count_plans(probe)
    for _ in range(PLAN_ROUNDS + 1):
        for entity, get in probe.shuffled(list(probe.gets.items())):
            plan = field_lookup(probe, entity, get)
            if plan is not None:
                yield plan
        count = next(counts, None)
        if count is not None:
            yield count
    yield from counts


def field_lookup(probe: WorldProbe, entity: str, get: ActionSpec) -> Plan | None:
    """A question about one field of a record of `entity`, read with `get`; None if the records
    offer none that a cheap answer could not pass."""
    model = probe.compiled.models[entity]
    rows = probe.start.query(f'SELECT * FROM "{model.table.name}" ORDER BY id')
    if len(rows) < 2:
        return None
    row, other = probe.rng.sample(rows, 2)
    names = [n for n in model.spec.fields if n != model.state_field and _answerable(probe, entity, n)]
    probe.rng.shuffle(names)
    for name in names:
        if model.spec.fields[name].type == "enum":  # not the commonest value: a guess of it would pass
            row, other = _uncommon(probe, rows, name, row, other)
        right, wrong = fact(probe.spec, entity, name, row[name]), fact(probe.spec, entity, name, other[name])
        if right is None or wrong is None or stated(right) == stated(wrong):
            continue
        read = Action(tool=get.name, args={id_arg(entity): row["id"]})
        return Plan(
            "lookup",
            [read],
            facts=[right],
            checks=[read_check(probe, read, f"the {model.label.lower()}")],
            forbidden=rivals(probe.spec, entity, name, row[name]),
            question=probe.rng.choice(LOOKUP_TEMPLATES).format(
                greeting=GREETING_SLOT,
                me=ME_SLOT,
                what=field_phrase(name, model.spec.fields[name].type),
                label=model.label.lower(),
                key=row["id"],
            ),
            wrong_answer=f"The {field_phrase(name, model.spec.fields[name].type)} is {stated(wrong)}.",
            tags=[get.name, name],
        )
    return None


def field_phrase(name: str, kind: str) -> str:
    """A column as a noun phrase: `capacity` as it is, `booked` as "number booked", `due` as
    "amount due" (never "the booked of doctor PR1")."""
    words = name.replace("_", " ")
    last = words.split()[-1]
    if not (last.endswith("ed") or last in ("due", "open", "active")):
        return words
    head = {"int": "number", "money": "amount", "float": "amount", "date": "date", "datetime": "time"}
    return f"{head.get(kind, 'value')} {words}"


def _uncommon(
    probe: WorldProbe, rows: list[dict[str, Any]], name: str, row: dict[str, Any], other: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A record holding one of the field's less common values (and one holding the commonest,
    for the wrong answer), or the pair as drawn if every value is as common."""
    counts = Counter(r[name] for r in rows)
    top = max(counts.values())
    rare = [r for r in rows if counts[r[name]] < top]
    common = [r for r in rows if counts[r[name]] == top]
    if not rare or counts[row[name]] < top:
        return row, other
    return probe.rng.choice(rare), probe.rng.choice(common)


def _answerable(probe: WorldProbe, entity: str, name: str) -> bool:
    """Whether a question about this field can be graded against cheap answers: an enum
    (whose values the policy text does not state), or a number or date with another of its
    kind in the same record (so an answer listing every value read fails). Not a name: the
    record holds just the one."""
    fields = probe.spec.entities[entity].fields
    kind = fields[name].type
    if kind == "str":
        return False
    if kind == "enum":
        return not any(re.search(rf"\b{re.escape(str(v))}\b", probe.world.policy) for v in fields[name].values or [])
    return sum(f.type == kind for f in fields.values()) >= 2


def _count_plans(probe: WorldProbe) -> Iterator[Plan]:
    for action in probe.shuffled([a for a in probe.spec.actions if a.kind == "list" and a.filters]):
        model = probe.compiled.models[action.entity]
        for name in action.filters:
            f = model.spec.fields[name]
            if f.type not in ("enum", "ref"):
                continue
            counts = probe.start.query(
                f'SELECT "{name}" AS v, count(*) AS n FROM "{model.table.name}" GROUP BY "{name}" ORDER BY n DESC'
            )
            if len(counts) < 2 or counts[0]["n"] < 2 or counts[0]["n"] > action.max_limit:
                continue
            value, n = counts[0]["v"], counts[0]["n"]
            label = model.label.lower()
            condition = (
                f"with {name.replace('_', ' ')} {value}"
                if f.type == "enum"
                else f"of {probe.spec.label_of(f.entity or '').lower()} {value}"
            )
            read = Action(tool=action.name, args={name: value, "limit": action.max_limit})
            yield Plan(
                "lookup",
                [read],
                facts=[CountFact(count=n, noun=singular(label))],
                checks=[read_check(probe, read, f"the {plural(label)} {condition}", keep=[name])],
                question=probe.rng.choice(COUNT_TEMPLATES).format(
                    greeting=GREETING_SLOT, me=ME_SLOT, plural=plural(label), condition=condition
                ),
                wrong_answer=f"There are {counts[1]['n'] if counts[1]['n'] != n else n + 1} {plural(label)}.",
                tags=[action.name, "count"],
            )
            break


def read_check(probe: WorldProbe, read: Action, what: str, keep: list[str] | None = None) -> ToolCalled:
    """The process check that the answer was read, not guessed: a call of the read that shows
    the value (with its arguments, or the ones in `keep`) took effect."""
    args = {k: v for k, v in read.args.items() if keep is None or k in keep}
    return ToolCalled(
        type="tool_called",
        requirement=f"The agent read {what} with {read.tool}.",
        tool=read.tool,
        args=args,
        noop_passes=False,
    )
