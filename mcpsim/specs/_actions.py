"""Each action of a spec as a typed tool: its arguments (with the fields' constraints), its output
view, its annotations and a body that reads its rows, checks its rules and writes."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field
from sqlalchemy import func, or_, select

from mcpsim.specs import _runtime as rt
from mcpsim.specs._lint import alias_of, amount_field, id_arg, owner_fields, ref_aliases
from mcpsim.specs._lint import scope as scope_of
from mcpsim.specs._spec import ActionSpec, Invariant, WorldSpec
from mcpsim.specs._tables import EntityModel, argument_type, id_type, keyword
from mcpsim.world import PartialFailure, ToolContext, World, to_cents

Body = Callable[[ToolContext, dict[str, Any]], Any]


@dataclass(frozen=True)
class CompiledAction:
    spec: ActionSpec
    refusals: tuple[rt.Refusal, ...]  # every named way the tool can refuse, in the order it checks them


class ActionBuilder:
    """Builds one tool of a compiled world."""

    def __init__(self, spec: WorldSpec, models: dict[str, EntityModel], action: ActionSpec) -> None:
        self.spec = spec
        self.models = models
        self.action = action
        self.model = models[action.entity]
        self.invariants = [*spec.invariants, *implied_unique(spec)]

    # -- arguments ------------------------------------------------------------------------------

    def _example(self, entity: str) -> str:
        fmt = self.spec.entities[entity].id
        return f"{fmt.prefix}{'0' * (fmt.digits - 3)}421"

    def _id_param(self, name: str, entity: str) -> inspect.Parameter:
        return keyword(name, id_type(self.models[entity].label, self._example(entity)))

    def _field_param(self, name: str, *, optional: bool) -> inspect.Parameter:
        f = self.model.spec.fields[name]
        if f.type == "ref" and f.entity:
            label = self.models[f.entity].label.lower()
            annotation = argument_type(f, description=f"The {label}'s id, such as {self._example(f.entity)}.")
            if optional:
                annotation = argument_type(f, description=f"The {label}'s id (leave out to keep).", optional=True)
            return keyword(name, annotation, None if optional else inspect.Parameter.empty)
        description = f.description or f"The {name.replace('_', ' ')}."
        if f.type == "money":
            description += " In dollars."
        if optional:
            return keyword(name, argument_type(f, description=description + " Leave out to keep.", optional=True), None)
        return keyword(name, argument_type(f, description=description))

    def _owner_params(self) -> list[inspect.Parameter]:
        params = []
        for name in owner_fields(self.spec, self.action):
            f = self.model.spec.fields[name]
            target = f.entity or self.action.entity
            description = f"The {self.models[target].label.lower()} the {self.model.label.lower()} belongs to."
            params.append(keyword(name, argument_type(f, description=description)))
        return params

    def parameters(self) -> list[inspect.Parameter]:
        a, entity = self.action, self.action.entity
        if a.kind in ("get", "delete"):
            return [self._id_param(id_arg(entity), entity), *self._owner_params()]
        if a.kind == "list":
            filters = [self._field_param(f, optional=True) for f in a.filters]
            return [*filters, self._limit_param(), keyword("offset", _bounded_int(0, None, "Rows to skip."), 0)]
        if a.kind == "search":
            query = keyword("query", _text(1, 100, "Words to look for (case-insensitive)."))
            return [query, self._limit_param()]
        if a.kind == "create":
            return [self._field_param(f, optional=self.model.spec.fields[f].optional) for f in a.inputs]
        if a.kind == "transfer":
            return [*self._transfer_params(), *self._owner_params()]
        optional = a.kind == "update"
        inputs = [self._field_param(f, optional=optional or self.model.spec.fields[f].optional) for f in a.inputs]
        return [self._id_param(id_arg(entity), entity), *self._owner_params(), *inputs]

    def _limit_param(self) -> inspect.Parameter:
        most = self.action.max_limit
        return keyword("limit", _bounded_int(1, most, f"At most this many results (1 to {most})."), min(20, most))

    def _transfer_params(self) -> list[inspect.Parameter]:
        entity, f = self.action.entity, self.model.spec.fields[self.action.field or ""]
        amount_type: Any = int if f.type == "int" else float
        unit = " In dollars." if f.type == "money" else ""
        amount = Field(gt=0, description=f"How much {self.action.field} to move.{unit}")
        return [
            self._id_param(f"source_{entity}_id", entity),
            self._id_param(f"target_{entity}_id", entity),
            keyword("amount", _annotated(amount_type, amount)),
        ]

    # -- outputs and hints ------------------------------------------------------------------------

    def returns(self) -> Any:
        if self.action.kind in ("list", "search"):
            return self.model.page
        if self.action.kind == "transfer":
            return self.model.transfer
        return self.model.view

    def hints(self) -> dict[str, bool]:
        a = self.action
        destructive = a.destructive if a.destructive is not None else a.kind in ("delete", "update")
        return {
            "read_only": a.read_only,
            "idempotent": a.read_only
            or (a.kind == "update" and not a.effects and not {"now", "today"} & set(map(str, a.set.values()))),
            "destructive": destructive and not a.read_only,
            "partial_failures": a.partial_failure is not None,
            # a transfer moves value to another party: moving it back is a second event, not an undo
            "irreversible": a.irreversible or a.kind == "transfer",
        }

    # -- refusals ---------------------------------------------------------------------------------

    def refusals(self) -> list[rt.Refusal]:
        a, label = self.action, self.model.label
        found: list[rt.Refusal] = []
        if a.kind == "update":
            found.append(rt.Refusal("nothing_to_change", NOTHING_TO_CHANGE, "input"))
        for inv in self.invariants:
            if inv.kind == "ownership" and inv.entity == a.entity and inv.field in owner_fields(self.spec, a):
                found.append(rt.Refusal(inv.error_name, rt.invariant_template(inv, label), "invariant"))
        if a.kind == "transition":
            found.append(rt.Refusal("invalid_transition", self._transition_template(), "state"))
        if a.kind == "transfer":
            found.append(rt.Refusal("same_row", f"The source and target {label.lower()} must differ", "input"))
        found += [rt.Refusal(p.name, p.message, "precondition") for p in a.preconditions]
        if a.kind == "delete" and self.model.referenced_by:
            found.append(rt.Refusal("still_referenced", self._referenced_template(), "reference"))
        for inv in self.invariants:
            if inv.kind != "ownership" and self._may_break(inv):
                found.append(
                    rt.Refusal(inv.error_name, rt.invariant_template(inv, self.models[inv.entity].label), "invariant")
                )
        return found

    def _may_break(self, inv: Invariant) -> bool:
        """Whether this action writes a field an invariant reads."""
        a = self.action
        if a.read_only or a.kind == "delete":
            return False
        written: set[tuple[str, str]] = set()
        entity_fields = set(a.inputs) | set(a.set) | ({a.field} if a.field else set())
        written |= {(a.entity, f) for f in entity_fields}
        if a.kind == "create":
            written |= {(a.entity, f) for f in self.model.spec.fields}
        rows = scope_of(self.spec, a, after_write=True)
        written |= {(rows[e.row], e.field) for e in a.effects if e.row in rows}
        read = {inv.field, inv.limit_field, *(inv.fields or [])} - {None}
        return any((inv.entity, f) in written for f in read)

    def _transition_template(self) -> str:
        return f"{self.model.label} {{row.id}} is {{row.{self.model.state_field}}}; it cannot become {self.action.to}"

    def _referenced_template(self) -> str:
        return f"{self.model.label} {{row.id}} cannot be deleted while other records refer to it"

    # -- the body ---------------------------------------------------------------------------------

    def body(self) -> Body:
        return {
            "get": self._get,
            "list": self._list,
            "search": self._search,
            "create": self._create,
            "update": self._update,
            "transition": self._transition,
            "transfer": self._transfer,
            "delete": self._delete,
        }[self.action.kind]

    def _scope(self, ctx: ToolContext, args: dict[str, Any]) -> rt.Scope:
        types: dict[str, str] = {name: f.type for name, f in self.model.spec.fields.items()}
        if (moved := amount_field(self.action)) is not None:
            types["amount"] = self.model.spec.fields[moved].type
        stored = {k: to_cents(v) if types.get(k) == "money" and v is not None else v for k, v in args.items()}
        return rt.Scope(ctx, self.models, args=stored, arg_types=types)

    def _load(self, scope: rt.Scope, alias: str, model: EntityModel, key: Any) -> Any:
        row = model.load(scope.ctx, key.strip() if isinstance(key, str) else key)
        scope.bind(alias, model, row)
        return row

    def _bind_refs(self, scope: rt.Scope, row: Any) -> None:
        """The rows the action's row refers to, under their aliases."""
        for name, f in self.model.spec.fields.items():
            key = getattr(row, name)
            if f.type == "ref" and f.entity and key is not None:
                scope.bind(alias_of(name), self.models[f.entity], self.models[f.entity].load(scope.ctx, key))

    def _get(self, ctx: ToolContext, args: dict[str, Any]) -> BaseModel:
        scope = self._scope(ctx, args)
        row = self._load(scope, self.action.entity, self.model, args[id_arg(self.action.entity)])
        return self.model.to_view(row)

    def _page(self, ctx: ToolContext, conditions: list[Any], limit: int, offset: int) -> BaseModel:
        table = self.model.table
        total = int(ctx.session.scalar(select(func.count()).select_from(table).where(*conditions)) or 0)
        statement: Any = select(self.model.row).where(*conditions).order_by(table.c["id"]).offset(offset).limit(limit)
        rows = list(ctx.session.scalars(statement))
        following = offset + len(rows)
        return self.model.page(
            items=[self.model.to_view(r) for r in rows],
            total=total,
            next_offset=following if following < total else None,
        )

    def _list(self, ctx: ToolContext, args: dict[str, Any]) -> BaseModel:
        scope = self._scope(ctx, args)
        columns = self.model.table.c
        conditions = [columns[f] == scope.args[f] for f in self.action.filters if scope.args.get(f) is not None]
        return self._page(ctx, conditions, args["limit"], args["offset"])

    def _search(self, ctx: ToolContext, args: dict[str, Any]) -> BaseModel:
        columns = self.model.table.c
        searchable = [n for n, f in self.model.spec.fields.items() if f.searchable] or ["id"]
        words = args["query"].split()
        conditions = [or_(*(columns[n].ilike(f"%{_escape(w)}%", escape="\\") for n in searchable)) for w in words]
        return self._page(ctx, conditions, args["limit"], 0)

    def _create(self, ctx: ToolContext, args: dict[str, Any]) -> BaseModel:
        scope = self._scope(ctx, args)
        refs = ref_aliases(self.spec, self.action.entity)
        for name in self.action.inputs:
            alias = alias_of(name)
            if name.endswith("_id") and alias in refs and scope.args.get(name) is not None:
                self._load(scope, alias, self.models[refs[alias]], scope.args[name])
        rt.check_preconditions(scope, self.action.preconditions)
        values = self._new_values(scope)
        rt.check_unique(scope, self.model, values, set(values), None, self.invariants)
        row = self.model.row(id=ctx.new_id(self.action.entity), **values)
        ctx.add(row)
        ctx.session.flush()
        scope.bind(self.action.entity, self.model, row)
        scope.touch(self.model, row)
        return self._finish(scope, row)

    def _new_values(self, scope: rt.Scope) -> dict[str, Any]:
        values: dict[str, Any] = {}
        machine = self.model.spec.state_machine
        for name, f in self.model.spec.fields.items():
            values[name] = f.default
            if machine is not None and machine.field == name and f.default is None:
                values[name] = machine.initial
        values |= {name: scope.args.get(name) for name in self.action.inputs}
        for name in self.action.inputs:
            if isinstance(values[name], str) and name.endswith("_id"):
                values[name] = values[name].strip()
        values |= {name: scope.value(rt.ops.parse_operand(raw)) for name, raw in self.action.set.items()}
        return values

    def _finish(self, scope: rt.Scope, row: Any) -> BaseModel:
        """A partial failure if the fault injector asks for one, else the effects and invariants."""
        partial = self.action.partial_failure
        if partial is not None and scope.ctx.fault == "partial" and self.model.state_field:
            setattr(row, self.model.state_field, partial.state)
            scope.ctx.session.flush()
            raise PartialFailure(scope.render(partial.message))
        rt.apply_effects(scope, self.action.effects)
        rt.check_invariants(scope, self.invariants)
        scope.ctx.session.flush()
        return self.model.to_view(row)

    def _existing(self, scope: rt.Scope, args: dict[str, Any]) -> Any:
        row = self._load(scope, self.action.entity, self.model, args[id_arg(self.action.entity)])
        self._bind_refs(scope, row)
        rt.check_ownership(scope, self.action.entity, self.invariants)
        return row

    def _update(self, ctx: ToolContext, args: dict[str, Any]) -> BaseModel:
        scope = self._scope(ctx, args)
        row = self._existing(scope, args)
        given = {name: scope.args[name] for name in self.action.inputs if scope.args.get(name) is not None}
        if not given:
            raise rt.Refused("nothing_to_change", NOTHING_TO_CHANGE)
        rt.check_preconditions(scope, self.action.preconditions)
        current = {name: getattr(row, name) for name in self.model.spec.fields}
        rt.check_unique(scope, self.model, current | given, set(given), row.id, self.invariants)
        for name, value in given.items():
            setattr(row, name, value.strip() if isinstance(value, str) and name.endswith("_id") else value)
        for name, raw in self.action.set.items():
            setattr(row, name, scope.value(rt.ops.parse_operand(raw)))
        scope.touch(self.model, row)
        return self._finish(scope, row)

    def _transition(self, ctx: ToolContext, args: dict[str, Any]) -> BaseModel:
        scope = self._scope(ctx, args)
        row = self._existing(scope, args)
        machine = self.model.spec.state_machine
        assert machine is not None  # the spec's checks require one
        if self.action.to not in machine.transitions.get(getattr(row, machine.field), []):
            scope.bind("row", self.model, row)
            raise rt.Refused("invalid_transition", scope.render(self._transition_template()))
        rt.check_preconditions(scope, self.action.preconditions)
        setattr(row, machine.field, self.action.to)
        for name in self.action.inputs:
            if scope.args.get(name) is not None:
                setattr(row, name, scope.args[name])
        scope.touch(self.model, row)
        return self._finish(scope, row)

    def _transfer(self, ctx: ToolContext, args: dict[str, Any]) -> BaseModel:
        scope = self._scope(ctx, args)
        entity, field = self.action.entity, self.action.field or ""
        source = self._load(scope, "source", self.model, args[f"source_{entity}_id"])
        target = self._load(scope, "target", self.model, args[f"target_{entity}_id"])
        rt.check_ownership(scope, "source", self.invariants)
        if source.id == target.id:
            raise rt.Refused("same_row", f"The source and target {self.model.label.lower()} must differ")
        rt.check_preconditions(scope, self.action.preconditions)
        amount = scope.args["amount"]
        setattr(source, field, getattr(source, field) - amount)
        setattr(target, field, getattr(target, field) + amount)
        scope.touch(self.model, source)
        scope.touch(self.model, target)
        rt.apply_effects(scope, self.action.effects)
        rt.check_invariants(scope, self.invariants)
        ctx.session.flush()
        return self.model.transfer(source=self.model.to_view(source), target=self.model.to_view(target))

    def _delete(self, ctx: ToolContext, args: dict[str, Any]) -> BaseModel:
        scope = self._scope(ctx, args)
        row = self._existing(scope, args)
        rt.check_preconditions(scope, self.action.preconditions)
        if self._referenced(ctx, row):
            scope.bind("row", self.model, row)
            raise rt.Refused("still_referenced", scope.render(self._referenced_template()))
        view = self.model.to_view(row)
        rt.apply_effects(scope, self.action.effects)
        ctx.session.delete(row)
        ctx.session.flush()
        return view

    def _referenced(self, ctx: ToolContext, row: Any) -> bool:
        for entity, field in self.model.referenced_by:
            table = self.models[entity].table
            if ctx.session.scalar(select(func.count()).select_from(table).where(table.c[field] == row.id)):
                return True
        return False

    # -- the tool ---------------------------------------------------------------------------------

    def register(self, world: World) -> None:
        body = self.body()

        def tool(ctx: ToolContext, **arguments: Any) -> Any:
            return body(ctx, arguments)

        params = self.parameters()
        returns = self.returns()
        tool.__name__ = tool.__qualname__ = self.action.name
        tool.__doc__ = self.action.description
        context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=ToolContext)
        tool.__signature__ = inspect.Signature([context, *params], return_annotation=returns)  # type: ignore[attr-defined]
        tool.__annotations__ = {"ctx": ToolContext} | {p.name: p.annotation for p in params} | {"return": returns}
        world.tool(name=self.action.name, title=self.action.title, **self.hints())(tool)


NOTHING_TO_CHANGE = "Nothing to change: give at least one field to update"


def implied_unique(spec: WorldSpec) -> list[Invariant]:
    """Field-level `unique: true` as unique invariants."""
    return [
        Invariant(kind="unique", entity=entity, fields=[name])
        for entity, e in spec.entities.items()
        for name, f in e.fields.items()
        if f.unique
    ]


def _annotated(kind: Any, info: Any) -> Any:
    return Annotated[kind, info]


def _bounded_int(low: int, high: int | None, description: str) -> Any:
    return _annotated(int, Field(ge=low, le=high, description=description))


def _text(low: int, high: int, description: str) -> Any:
    return _annotated(str, Field(min_length=low, max_length=high, description=description))


def _escape(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
