"""What a compiled tool does at call time: the rows in scope, operands read from them, the named
refusals (preconditions, invariants) and the effects."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from mcpsim.specs import _operands as ops
from mcpsim.specs._spec import Condition, Effect, Invariant, Precondition
from mcpsim.specs._tables import EntityModel
from mcpsim.world import ToolContext, WorldError, dollars

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "in": lambda a, b: a in (b or []),
    "not_in": lambda a, b: a not in (b or []),
}


class Refused(WorldError):
    """A named business error: `name` is the rule that refused the call (the agent reads the message)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


@dataclass(frozen=True)
class Refusal:
    """A way an action can be refused: its name and its message template (placeholders `{a.b}`)."""

    name: str
    template: str
    origin: str  # "precondition", "state", "invariant", "reference", "input"


@dataclass
class Scope:
    """The rows and arguments one call reads: aliases to rows, `args`, the clock."""

    ctx: ToolContext
    models: dict[str, EntityModel]
    rows: dict[str, tuple[EntityModel, Any]] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)
    arg_types: dict[str, str] = field(default_factory=dict)  # argument -> field type (money shown in dollars)
    touched: dict[int, tuple[EntityModel, Any]] = field(default_factory=dict)

    def bind(self, alias: str, model: EntityModel, row: Any) -> None:
        self.rows[alias] = (model, row)

    def value(self, operand: ops.Operand) -> Any:
        if isinstance(operand, ops.Literal):
            return operand.value
        if isinstance(operand, ops.Now):
            return self.ctx.now.date().isoformat() if operand.date_only else self.ctx.now.isoformat()
        if isinstance(operand, ops.Count):
            return self._count(operand)
        if operand.alias == "args":
            return self.args.get(operand.field)
        _, row = self.rows[operand.alias]
        return getattr(row, operand.field)

    def _count(self, operand: ops.Count) -> int:
        model = self.models[operand.entity]
        conditions = [model.table.c[name] == self.value(o) for name, o in operand.where]
        self.ctx.session.flush()
        statement = select(func.count()).select_from(model.table).where(*conditions)
        return int(self.ctx.session.scalar(statement) or 0)

    def text(self, path: ops.Path) -> str:
        """A value as a message shows it (money in dollars)."""
        value = self.value(path)
        kind = self.arg_types.get(path.field) if path.alias == "args" else self._field_type(path)
        if kind == "money" and isinstance(value, int):
            return f"${dollars(value):,.2f}"
        return str(value)

    def _field_type(self, path: ops.Path) -> str:
        model, _ = self.rows[path.alias]
        return model.field_type(path.field)

    def render(self, template: str) -> str:
        return ops.PLACEHOLDER.sub(lambda m: self.text(ops.Path(*m.group(1).split(".", 1))), template)

    def touch(self, model: EntityModel, row: Any) -> None:
        self.touched[id(row)] = (model, row)


def holds(scope: Scope, condition: Condition) -> bool:
    left = scope.value(ops.parse_operand(condition.left))
    right = scope.value(ops.parse_operand(condition.right))
    if condition.op in ("lt", "le", "gt", "ge") and (left is None or right is None):
        return False
    return _COMPARE[condition.op](left, right)


def check_preconditions(scope: Scope, preconditions: list[Precondition]) -> None:
    for p in preconditions:
        if not holds(scope, p.require):
            raise Refused(p.name, scope.render(p.message))


def apply_effects(scope: Scope, effects: list[Effect]) -> None:
    for e in effects:
        model, row = scope.rows[e.row]
        current = getattr(row, e.field)
        if e.set is not None:
            value = scope.value(ops.parse_operand(e.set))
        elif e.add is not None:
            value = (current or 0) + scope.value(ops.parse_operand(e.add))
        else:
            value = (current or 0) - scope.value(ops.parse_operand(e.subtract))
        setattr(row, e.field, value)
        scope.touch(model, row)


def invariant_template(inv: Invariant, label: str) -> str:
    if inv.message:
        return inv.message
    if inv.kind == "non_negative":
        return f"{label} {{row.id}}: {inv.field} cannot go below zero"
    if inv.kind == "capacity":
        limit = f"its {inv.limit_field}" if inv.limit_field else f"{inv.limit:g}"
        return f"{label} {{row.id}}: {inv.field} cannot exceed {limit}"
    if inv.kind == "unique":
        return f"A {label.lower()} with this {' and '.join(inv.fields or [])} already exists"
    return f"{label} {{row.id}} does not belong to {{args.{inv.field}}}"


def _broken(scope: Scope, model: EntityModel, row: Any, inv: Invariant) -> bool:
    if inv.kind == "non_negative":
        value = getattr(row, inv.field or "")
        return value is not None and value < 0
    if inv.kind == "capacity":
        value = getattr(row, inv.field or "")
        limit = getattr(row, inv.limit_field) if inv.limit_field else inv.limit
        return value is not None and limit is not None and value > limit
    if inv.kind == "unique":
        scope.ctx.session.flush()
        columns = model.table.c
        same = [columns[f] == getattr(row, f) for f in inv.fields or []]
        statement = select(func.count()).select_from(model.table).where(*same, columns["id"] != row.id)
        return bool(scope.ctx.session.scalar(statement))
    return False


def check_invariants(scope: Scope, invariants: list[Invariant]) -> None:
    """Every row the call wrote keeps every invariant of its entity, or the call is refused."""
    for model, row in scope.touched.values():
        for inv in invariants:
            if inv.entity == model.name and inv.kind != "ownership" and _broken(scope, model, row, inv):
                scope.bind("row", model, row)
                raise Refused(inv.error_name, scope.render(invariant_template(inv, model.label)))


def check_ownership(scope: Scope, alias: str, invariants: list[Invariant]) -> None:
    model, row = scope.rows[alias]
    for inv in invariants:
        if inv.kind == "ownership" and inv.entity == model.name and inv.field in scope.args:
            if getattr(row, inv.field or "") != scope.args[inv.field or ""]:
                scope.bind("row", model, row)
                raise Refused(inv.error_name, scope.render(invariant_template(inv, model.label)))


def check_unique(
    scope: Scope,
    model: EntityModel,
    values: dict[str, Any],
    changed: set[str],
    row_id: str | None,
    invariants: list[Invariant],
) -> None:
    """Refuse a write whose values another row already holds, before the database would."""
    columns = model.table.c
    for inv in invariants:
        if inv.kind != "unique" or inv.entity != model.name or not set(inv.fields or []) & changed:
            continue
        scope.ctx.session.flush()
        same = [columns[f] == values[f] for f in inv.fields or [] if f in values]
        others = [columns["id"] != row_id] if row_id is not None else []
        if scope.ctx.session.scalar(select(func.count()).select_from(model.table).where(*same, *others)):
            raise Refused(inv.error_name, scope.render(invariant_template(inv, model.label)))
