"""Whose records a call touches: the spec's `owner` fields (an entity's reference to the person
served, or to a row that has an owner) followed up to the identity row. A plan whose writes act
on another person's record is never a gold solution (`acts_for_another`); it becomes a refusal."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpsim.engine import Episode
from mcpsim.specs import ActionSpec, id_arg
from mcpsim.taskgen._plan import Plan
from mcpsim.taskgen._probe import WorldProbe

MAX_HOPS = 4  # owner references followed before giving up (a spec's chains are short)


def owner_of(probe: WorldProbe, episode: Episode, entity: str, key: Any) -> str | None:
    """The identity row that owns a row (itself for an identity row), or None where the spec
    declares no owner on the way."""
    for _ in range(MAX_HOPS):
        if key is None:
            return None
        if entity == probe.identity:
            return str(key)
        spec = probe.spec.entities[entity]
        owner = spec.fields.get(spec.owner) if spec.owner else None
        if owner is None or owner.entity is None:
            return None
        rows = episode.query(f'SELECT "{spec.owner}" AS v FROM "{probe.table(entity)}" WHERE id = ?', (key,))
        if not rows:
            return None
        entity, key = owner.entity, rows[0]["v"]
    return None


def touched(probe: WorldProbe, action: ActionSpec, args: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """The rows a write acts on or for: the row it changes (a transfer's source) and the rows its
    reference arguments name (a new booking's customer, a note's appointment)."""
    if action.kind == "transfer":
        yield action.entity, args.get(f"source_{action.entity}_id")
    elif action.kind != "create":
        yield action.entity, args.get(id_arg(action.entity))
    for name, value in args.items():
        entity = probe.arguments.entity_of(action, name)
        if entity is not None and name != id_arg(action.entity) and not name.startswith(("source_", "target_")):
            yield entity, value


def foreign(probe: WorldProbe, episode: Episode, action: ActionSpec, args: dict[str, Any], person: str | None) -> bool:
    """Whether a call acts on a record that belongs to someone other than `person`."""
    if person is None or probe.identity is None:
        return False
    owners = {owner_of(probe, episode, entity, key) for entity, key in touched(probe, action, args)}
    return bool(owners - {None, str(person)})


def acts_for_another(probe: WorldProbe, plan: Plan) -> bool:
    """Whether a plan's writes, run in order on a fork of the start, act on a record of someone
    other than the plan's person."""
    actions = {a.name: a for a in probe.spec.actions}
    if plan.person is None or not any(probe.world.tools[a.tool].writes for a in plan.actions):
        return False
    episode = probe.start.fork(id="taskgen-owner")
    try:
        for step in plan.actions:
            action = actions.get(step.tool)
            if action is not None and not action.read_only and foreign(probe, episode, action, step.args, plan.person):
                return True
            episode.call(step.tool, step.args)
    finally:
        episode.close()
    return False
