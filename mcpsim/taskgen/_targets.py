"""What the composed plan kinds (`_composed`, `_sweeps`, `_aggregates`) find their targets with:
the user named by their name, not their id (`Me`: the search that finds them and the lookup
that verifies them), the records they own (`Owned`: an entity with a reference to them, listed
with a filter on it), the listing of a set of records page by page (`listing`), the transitions
a record can take, and the run of a whole gold solution on a fork of the start (`runs`).

The instruction of a composed task names no id: the agent finds the user by name, lists their
records and reads the ids it acts on from the results."""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from typing import Any

from mcpsim.specs import ActionSpec, id_arg
from mcpsim.taskgen._probe import WorldProbe
from mcpsim.taskgen._wording import plural
from mcpsim.tasks import Action

RANKED_TYPES = ("money", "int", "float", "date")
MOST_OWNED = 6  # people tried per owned entity, those with the most records first


@dataclass(frozen=True)
class Me:
    """The user, named by name: the search that finds them and the lookup that verifies them."""

    person: str
    name: str
    actions: tuple[Action, Action]  # search by name, then get by the id it shows

    @property
    def knows(self) -> dict[str, Any]:
        return {"name": self.name}


@dataclass(frozen=True)
class Owned:
    """Records of `entity` that refer to the user through `field`, listed with `lister`."""

    entity: str
    field: str
    lister: ActionSpec
    state: str | None  # the entity's state field, if any

    def label(self, probe: WorldProbe, many: bool = False) -> str:
        label = probe.compiled.models[self.entity].label.lower()
        return plural(label) if many else label


def find_me(probe: WorldProbe, person: str) -> Me | None:
    """The user `person` as a search by their name finds them (the only match), then the lookup;
    None if the world has no such search or the name is not theirs alone."""
    ident = probe.identity
    if ident is None or ident not in probe.gets:
        return None
    search = next((a for a in probe.spec.actions if a.kind == "search" and a.entity == ident), None)
    row = probe.row(ident, person)
    if search is None or row is None or not isinstance(row.get("name"), str):
        return None
    name = row["name"]
    found = call(probe, search.name, {"query": name})
    items = found.get("items", []) if isinstance(found, dict) else []
    if [item.get(id_arg(ident)) for item in items] != [person]:
        return None
    return Me(
        person=person,
        name=name,
        actions=(
            Action(tool=search.name, args={"query": name}),
            Action(tool=probe.gets[ident].name, args={id_arg(ident): person}),
        ),
    )


def owned(probe: WorldProbe) -> list[Owned]:
    """Every entity whose records the user owns and can list by a filter on themselves."""
    ident = probe.identity
    found: list[Owned] = []
    if ident is None:
        return found
    for action in probe.spec.actions:
        if action.kind != "list":
            continue
        entity = probe.spec.entities[action.entity]
        for name in action.filters:
            f = entity.fields[name]
            if f.type == "ref" and f.entity == ident:
                machine = entity.state_machine
                state = machine.field if machine is not None and machine.field in entity.fields else None
                found.append(Owned(action.entity, name, action, state))
                break
    return found


def owners(probe: WorldProbe, kind: Owned) -> list[str]:
    """The people with the most records of `kind` first (ties by id), at most MOST_OWNED."""
    rows = probe.start.query(
        f'SELECT "{kind.field}" AS p, count(*) AS n FROM "{probe.table(kind.entity)}" '
        f'WHERE "{kind.field}" IS NOT NULL GROUP BY "{kind.field}" ORDER BY n DESC, p'
    )
    return [str(r["p"]) for r in rows[:MOST_OWNED] if r["n"] >= 2]


def records(probe: WorldProbe, kind: Owned, person: str, state: str | None = None) -> list[dict[str, Any]]:
    """The user's records of `kind` (in `state`, if given), in id order."""
    where, params = f'"{kind.field}" = ?', [person]
    if state is not None and kind.state is not None:
        where += f' AND "{kind.state}" = ?'
        params.append(state)
    return probe.start.query(f'SELECT * FROM "{probe.table(kind.entity)}" WHERE {where} ORDER BY id', tuple(params))


def listing(probe: WorldProbe, kind: Owned, person: str, state: str | None = None) -> list[Action]:
    """The list calls that show every one of the user's records of `kind` (in `state`): the
    filter on the user (and on the state, when the tool filters by it), every page."""
    args: dict[str, Any] = {kind.field: person}
    if state is not None and kind.state in kind.lister.filters:
        args[kind.state] = state
    total = len(records(probe, kind, person, state if kind.state in kind.lister.filters else None))
    most = kind.lister.max_limit
    pages = max(1, -(-total // most))
    return [
        Action(tool=kind.lister.name, args={**args, "limit": most, **({"offset": i * most} if i else {})})
        for i in range(pages)
    ]


def transitions(probe: WorldProbe, entity: str) -> list[ActionSpec]:
    """The writes that act on one record of `entity` named by its id alone (transitions,
    deletes), in the spec's order."""
    return [a for a in probe.writes if a.entity == entity and a.kind in ("transition", "delete") and not a.inputs]


def act(probe: WorldProbe, action: ActionSpec, key: Any) -> Action:
    """`action` on the record `key`, with the other arguments the tool requires read from the
    record (its owner's id, where the world's ownership rule asks for it)."""
    row = probe.row(action.entity, key) or {}
    args: dict[str, Any] = {id_arg(action.entity): key}
    for p in probe.world.tools[action.name].parameters:
        if p.name not in args and p.default is inspect.Parameter.empty and row.get(p.name) is not None:
            args[p.name] = row[p.name]
    return Action(tool=action.name, args=args)


def runs(probe: WorldProbe, actions: list[Action]) -> bool:
    """Whether every call of `actions`, run in order on a fork of the start, succeeds, and every
    write changes something."""
    episode = probe.start.fork(id="taskgen-composed")
    try:
        for a in actions:
            result = episode.call(a.tool, a.args)
            if result.is_error or result.bug or (probe.world.tools[a.tool].writes and not result.changes):
                return False
        return True
    finally:
        episode.close()


def call(probe: WorldProbe, tool: str, args: dict[str, Any]) -> Any:
    """What a call returns on a fork of the start (thrown away), as JSON data; None on an error."""
    episode = probe.start.fork(id="taskgen-composed")
    try:
        result = episode.call(tool, args)
    finally:
        episode.close()
    if result.is_error or result.value is None:
        return None
    value = result.value
    dumped = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
    return json.loads(json.dumps(dumped, default=str))


def ranked_fields(probe: WorldProbe, entity: str) -> list[str]:
    """The fields of `entity` a user ranks records by (amounts, counts, dates), in spec order."""
    fields = probe.spec.entities[entity].fields
    return [n for n, f in fields.items() if f.type in RANKED_TYPES and not f.optional]


def words(name: str) -> str:
    return name.replace("_", " ")


def verb(probe: WorldProbe, action: ActionSpec, thing: str) -> str:
    """How the user asks for `action` on `thing` ("cancel my pending order"): the action's
    name with the entity's word replaced by the thing, else the name and "for" the thing."""
    parts = action.name.split("_")
    entity_words = probe.spec.entities[action.entity].label or action.entity
    own = {action.entity, *entity_words.lower().split()}
    if parts[-1] in own and len(parts) > 1:
        return f"{' '.join(parts[:-1])} {thing}"
    return f"{' '.join(parts)} for {thing}"


def first_that_runs(probe: WorldProbe, reads: list[Action], writes: list[Action]) -> list[Action]:
    """`reads` and the first of `writes` that succeeds after them (a near miss must replay), or
    `reads` alone (stops after reading) if none does."""
    for write in writes:
        if runs(probe, [*reads, write]):
            return [*reads, write]
    return reads


def field_noun(probe: WorldProbe, entity: str, field: str) -> str:
    """A field's name as a noun a person would write: "amount due" for a money field named
    `due`, "number booked" for a count named `booked`, else the name in words."""
    said = words(field)
    last = said.split()[-1]
    kind = probe.spec.entities[entity].fields[field].type
    if kind == "money" and (last.endswith("ed") or last in ("due", "owed", "paid")):
        return f"amount {said}"
    if kind == "int" and last.endswith("ed"):
        return f"number {said}"
    return said
