"""What a spec's parts may refer to (the rows in an action's scope, its arguments), and the static
checks run when a spec is parsed: every name resolves, every state is declared, every operand
reads something that exists."""

from __future__ import annotations

from mcpsim.specs._hygiene import name_errors
from mcpsim.specs._operands import Count, Path, adjacent_placeholders, parse_operand, paths_of, placeholders
from mcpsim.specs._spec import NUMERIC, ActionSpec, EntitySpec, WorldSpec, register_static_check


def alias_of(field: str) -> str:
    """The name a referenced row goes by: `book_id` -> `book`."""
    return field.removesuffix("_id")


def id_arg(entity: str) -> str:
    return f"{entity}_id"


def ref_aliases(spec: WorldSpec, entity: str) -> dict[str, str]:
    """alias -> entity for each reference field of `entity`."""
    fields = spec.entities[entity].fields
    return {alias_of(name): f.entity for name, f in fields.items() if f.type == "ref" and f.entity}


def scope(spec: WorldSpec, action: ActionSpec, *, after_write: bool = False) -> dict[str, str]:
    """alias -> entity of the rows an action's preconditions (or, `after_write`, its effects) read."""
    if action.kind == "transfer":
        return {"source": action.entity, "target": action.entity}
    if action.kind == "create":
        refs = ref_aliases(spec, action.entity)
        rows = {alias_of(i): refs[alias_of(i)] for i in action.inputs if alias_of(i) in refs and i.endswith("_id")}
        return rows | ({action.entity: action.entity} if after_write else {})
    if action.kind in ("update", "transition", "delete"):
        return {action.entity: action.entity} | ref_aliases(spec, action.entity)
    return {}


def arguments(spec: WorldSpec, action: ActionSpec) -> set[str]:
    """The names of an action's arguments (what `args.<name>` may read)."""
    kind = action.kind
    if kind == "get" or kind == "delete":
        return {id_arg(action.entity)}
    if kind == "list":
        return set(action.filters) | {"limit", "offset"}
    if kind == "search":
        return {"query", "limit"}
    owners = set(owner_fields(spec, action))
    if kind == "transfer":
        return {f"source_{action.entity}_id", f"target_{action.entity}_id", "amount"} | owners
    if kind == "create":
        return set(action.inputs)
    return {id_arg(action.entity)} | set(action.inputs) | owners


def amount_field(action: ActionSpec) -> str | None:
    """The field a transfer's `amount` argument moves (the spec's declared meaning of `amount`);
    None for any other action, where an argument named `amount` is an input like any other,
    constrained and typed by its own field."""
    return action.field if action.kind == "transfer" else None


def owner_fields(spec: WorldSpec, action: ActionSpec) -> list[str]:
    """The ownership fields a write to an existing row must be given (and must match)."""
    if action.kind not in ("update", "transition", "delete", "transfer"):
        return []
    return [
        i.field
        for i in spec.invariants
        if i.kind == "ownership" and i.entity == action.entity and i.field and i.field not in action.inputs
    ]


def _entity_errors(spec: WorldSpec, name: str, entity: EntitySpec) -> list[str]:
    errors: list[str] = []
    where = f"entity {name}"
    if "id" in entity.fields:
        errors.append(f"{where}: 'id' is implicit (declared by id:), not a field")
    for fname, f in entity.fields.items():
        if f.type == "ref" and f.entity not in spec.entities:
            errors.append(f"{where}.{fname}: refers to unknown entity {f.entity!r}")
        if f.type == "ref" and not fname.endswith("_id"):
            errors.append(f"{where}.{fname}: a reference field's name ends in _id")
        if f.generator is None and f.default is None and not f.optional and f.type != "ref":
            errors.append(f"{where}.{fname}: needs a generator, a default or optional: true")
        if f.searchable and f.type not in ("str", "enum"):
            errors.append(f"{where}.{fname}: only text fields are searchable")
    owner = entity.fields.get(entity.owner) if entity.owner else None
    if entity.owner and (owner is None or owner.type != "ref"):
        errors.append(f"{where}: the owner {entity.owner!r} is not a reference field")
    machine = entity.state_machine
    if machine is not None:
        field = entity.fields.get(machine.field)
        if field is None or field.type != "enum":
            errors.append(f"{where}: the state machine's field {machine.field!r} is not an enum field")
        else:
            states = set(field.values or [])
            named = {machine.initial} | set(machine.transitions) | {s for t in machine.transitions.values() for s in t}
            for state in sorted(named - states):
                errors.append(f"{where}: state {state!r} is not a value of {machine.field}")
    return errors


def _cycle(spec: WorldSpec) -> list[str]:
    left = sorted(set(spec.entities) - set(seeding_order(spec)))
    return [f"references form a cycle among {left}"] if left else []


def seeding_order(spec: WorldSpec) -> list[str]:
    """Entities with the ones they refer to first (a cycle leaves its members out)."""
    done: list[str] = []
    pending = dict(spec.entities)
    while pending:
        ready = [
            n
            for n, e in pending.items()
            if all(f.entity in done or f.entity == n and f.optional for f in e.fields.values() if f.type == "ref")
        ]
        if not ready:
            break
        for n in sorted(ready):
            done.append(n)
            del pending[n]
    return done


def _operand_errors(spec: WorldSpec, where: str, raw: object, rows: dict[str, str], args: set[str]) -> list[str]:
    try:
        operand = parse_operand(raw)
    except ValueError as exc:
        return [f"{where}: {exc}"]
    errors: list[str] = []
    if isinstance(operand, Count):
        if operand.entity not in spec.entities:
            errors.append(f"{where}: count of unknown entity {operand.entity!r}")
        else:
            fields = set(spec.entities[operand.entity].fields) | {"id"}
            errors += [f"{where}: {operand.entity} has no field {f!r}" for f, _ in operand.where if f not in fields]
    for path in paths_of(operand):
        errors += _path_errors(spec, where, path, rows, args)
    return errors


def _path_errors(spec: WorldSpec, where: str, path: Path, rows: dict[str, str], args: set[str]) -> list[str]:
    if path.alias == "args":
        return [] if path.field in args else [f"{where}: no argument {path.field!r} (has {sorted(args)})"]
    if path.alias not in rows:
        return [f"{where}: no row {path.alias!r} in scope (in scope: {sorted(rows) or 'none'})"]
    entity = rows[path.alias]
    if entity not in spec.entities:  # a reference to an unknown entity: an error of its own
        return []
    if path.field != "id" and path.field not in spec.entities[entity].fields:
        return [f"{where}: {entity} has no field {path.field!r}"]
    return []


def _action_errors(spec: WorldSpec, action: ActionSpec) -> list[str]:
    where = f"action {action.name}"
    if action.entity not in spec.entities:
        return [f"{where}: unknown entity {action.entity!r}"]
    entity = spec.entities[action.entity]
    errors: list[str] = []
    for name in [*action.inputs, *action.set, *action.filters]:
        if name not in entity.fields:
            errors.append(f"{where}: {action.entity} has no field {name!r}")
    if action.kind in ("create", "update") and not action.inputs and not action.set:
        errors.append(f"{where}: a {action.kind} takes inputs or sets fields")
    if action.kind == "create":
        given = set(action.inputs) | set(action.set)
        for fname, f in entity.fields.items():
            if fname not in given and f.default is None and not f.optional and not _is_state(entity, fname):
                errors.append(f"{where}: field {fname!r} is neither an input, set, defaulted nor optional")
    if action.kind == "transfer":
        moved = entity.fields.get(action.field or "")
        if moved is None or moved.type not in NUMERIC:
            errors.append(f"{where}: a transfer moves a numeric field (field: ...), got {action.field!r}")
    if action.kind == "transition":
        errors += _transition_errors(entity, action, where)
    if action.partial_failure is not None:
        if action.kind not in ("create", "transition") or entity.state_machine is None:
            errors.append(f"{where}: partial failures are for creates and transitions of an entity with states")
        elif action.partial_failure.state not in (_states(entity) or []):
            errors.append(f"{where}: partial failure state {action.partial_failure.state!r} is not a state")
    if action.read_only and (action.preconditions or action.effects or action.irreversible):
        errors.append(f"{where}: a read has no preconditions, effects or irreversibility")
    errors += _rule_errors(spec, action, where)
    return errors


def _states(entity: EntitySpec) -> list[str] | None:
    """The values of the entity's state field (None without one; an unknown state field is an
    error of its own)."""
    state = entity.fields.get(entity.state_machine.field) if entity.state_machine is not None else None
    return state.values if state is not None else None


def _is_state(entity: EntitySpec, field: str) -> bool:
    return entity.state_machine is not None and entity.state_machine.field == field


def _transition_errors(entity: EntitySpec, action: ActionSpec, where: str) -> list[str]:
    if entity.state_machine is None:
        return [f"{where}: a transition needs an entity with a state_machine"]
    targets = {s for t in entity.state_machine.transitions.values() for s in t}
    if action.to not in targets:
        return [f"{where}: no transition leads to {action.to!r} (reachable: {sorted(targets)})"]
    return []


def _rule_errors(spec: WorldSpec, action: ActionSpec, where: str) -> list[str]:
    errors: list[str] = []
    before, after = scope(spec, action), scope(spec, action, after_write=True)
    args = arguments(spec, action)
    names = [p.name for p in action.preconditions]
    errors += [f"{where}: precondition {n!r} declared twice" for n in sorted({n for n in names if names.count(n) > 1})]
    for p in action.preconditions:
        w = f"{where}.{p.name}"
        errors += _operand_errors(spec, w, p.require.left, before, args)
        errors += _operand_errors(spec, w, p.require.right, before, args)
        for path in placeholders(p.message):
            errors += _path_errors(spec, f"{w}.message", path, before, args)
        errors += _adjacent_errors(f"{w}.message", p.message)
    for i, e in enumerate(action.effects):
        w = f"{where}.effects[{i}]"
        errors += _path_errors(spec, w, Path(e.row, e.field), after, args)
        for raw in (e.add, e.subtract, e.set):
            if raw is not None:
                errors += _operand_errors(spec, w, raw, after, args)
        if e.row in after and after[e.row] in spec.entities and (e.add is not None or e.subtract is not None):
            f = spec.entities[after[e.row]].fields.get(e.field)
            if f is not None and f.type not in NUMERIC:
                errors.append(f"{w}: add/subtract on a non-numeric field {e.field!r}")
    for name, raw in action.set.items():
        errors += _operand_errors(spec, f"{where}.set.{name}", raw, before, args)
    return errors


def _adjacent_errors(where: str, message: str) -> list[str]:
    pair = adjacent_placeholders(message)
    if pair is None:
        return []
    return [f"{where}: placeholders {{{pair[0]}}} and {{{pair[1]}}} are adjacent; put text between them"]


def _invariant_errors(spec: WorldSpec) -> list[str]:
    errors: list[str] = []
    for inv in spec.invariants:
        where = f"invariant {inv.error_name}"
        errors += _adjacent_errors(f"{where}.message", inv.message or "")
        if inv.entity not in spec.entities:
            errors.append(f"{where}: unknown entity {inv.entity!r}")
            continue
        fields = spec.entities[inv.entity].fields
        for name in [inv.field, inv.limit_field, *(inv.fields or [])]:
            if name is not None and name not in fields:
                errors.append(f"{where}: {inv.entity} has no field {name!r}")
        if inv.kind in ("non_negative", "capacity") and inv.field in fields and fields[inv.field].type not in NUMERIC:
            errors.append(f"{where}: {inv.field} is not numeric")
    return errors


def static_errors(spec: WorldSpec) -> list[str]:
    """Everything wrong with a spec that can be seen without building it."""
    errors: list[str] = []
    if "default" not in spec.scales:
        errors.append("scales must include 'default'")
    for scale, counts in spec.scales.items():
        errors += [f"scale {scale}: unknown entity {e!r}" for e in counts if e not in spec.entities]
    for name, entity in spec.entities.items():
        errors += _entity_errors(spec, name, entity)
    errors += _cycle(spec)
    errors += _invariant_errors(spec)
    names = [a.name for a in spec.actions]
    errors += [f"action {n!r} declared twice" for n in sorted({n for n in names if names.count(n) > 1})]
    for action in spec.actions:
        errors += _action_errors(spec, action)
    for rule in spec.policy:
        errors += [f"policy {rule.kind}: unknown action {a!r}" for a in rule.actions if a not in names]
        if rule.kind in ("limit", "text") and not rule.text:
            errors.append(f"policy {rule.kind}: needs text")
    return errors + name_errors(spec)


register_static_check(static_errors)  # every spec parsed from here on is checked
