"""The body of an action's tool: it reads the rows the call names (and those they refer to),
checks the action's rules (ownership, preconditions, uniqueness, invariants) and writes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from sqlalchemy import func, or_, select

from mcpsim.specs import _runtime as rt
from mcpsim.specs._action_part import ActionPart
from mcpsim.specs._action_refusals import NOTHING_TO_CHANGE, referenced_template, transition_template
from mcpsim.specs._lint import alias_of, amount_field, id_arg, ref_aliases
from mcpsim.specs._tables import EntityModel
from mcpsim.world import PartialFailure, ToolContext, to_cents

Body = Callable[[ToolContext, dict[str, Any]], Any]


class ActionBody(ActionPart):
    """The body of one action's tool, by the action's kind."""

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
            raise rt.Refused("invalid_transition", scope.render(transition_template(self.model, self.action.to)))
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
            raise rt.Refused("still_referenced", scope.render(referenced_template(self.model)))
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


def _escape(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
