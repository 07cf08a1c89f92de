"""An action's arguments as the keyword parameters of its tool: ids with an example, fields with
their constraints and descriptions, the owners a write must name, paging, a search's query and a
transfer's rows and amount."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from pydantic import Field

from mcpsim.specs._action_part import ActionPart
from mcpsim.specs._lint import id_arg, owner_fields
from mcpsim.specs._tables import argument_type, id_type, keyword


class ActionParameters(ActionPart):
    """The parameters of one action's tool."""

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


def _annotated(kind: Any, info: Any) -> Any:
    return Annotated[kind, info]


def _bounded_int(low: int, high: int | None, description: str) -> Any:
    return _annotated(int, Field(ge=low, le=high, description=description))


def _text(low: int, high: int, description: str) -> Any:
    return _annotated(str, Field(min_length=low, max_length=high, description=description))
