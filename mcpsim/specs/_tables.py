"""A spec's entities as SQLAlchemy tables on a metadata of the world's own, mapped classes (so
`ctx.get` and `ctx.session` work as in a hand-built world), argument types and output views."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model
from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    UniqueConstraint,
    bindparam,
    select,
)
from sqlalchemy.orm import registry

from mcpsim.specs._lint import alias_of, id_arg
from mcpsim.specs._spec import ISO_DATE, ISO_DATETIME, EntitySpec, FieldSpec, WorldSpec
from mcpsim.world import ToolContext, WorldError, dollars

DEFAULT_MAX_TEXT = 500  # every text argument is bounded, declared or not

_COLUMN_TYPES: dict[str, Any] = {"int": Integer, "money": Integer, "float": Float, "bool": Boolean}
_PY_TYPES: dict[str, type] = {"int": int, "money": float, "float": float, "bool": bool}


def class_name(entity: str) -> str:
    return "".join(part.capitalize() for part in entity.split("_"))


@dataclass
class EntityModel:
    """One entity compiled: its table, its mapped row class and the view tools return."""

    name: str
    spec: EntitySpec
    label: str
    table: Table
    row: type
    view: type[BaseModel]
    id_arg: str
    state_field: str | None
    page: type[BaseModel]  # what list and search return
    transfer: type[BaseModel]  # what a transfer returns: both rows after the move
    referenced_by: list[tuple[str, str]] = field(default_factory=list)  # (entity, field) pointing here

    def to_view(self, row: Any) -> BaseModel:
        data: dict[str, Any] = {self.id_arg: row.id}
        for name, f in self.spec.fields.items():
            value = getattr(row, name)
            data[name] = dollars(value) if f.type == "money" and value is not None else value
        return self.view.model_validate(data)

    def field_type(self, name: str) -> str:
        return "str" if name == "id" else self.spec.fields[name].type

    @cached_property
    def _by_id(self) -> Any:
        return select(self.row).where(self.table.c["id"] == bindparam("key"))  # autoflush, as session.get

    def load(self, ctx: ToolContext, key: Any) -> Any:
        """The row with this id (the session's own object if it holds it already), or the business
        error "<Label> <key> not found", as `ctx.get` gives it. One statement built once per entity:
        `session.get` builds and keys its query again on every call."""
        row = ctx.session.execute(self._by_id, {"key": key}).scalar_one_or_none() if key is not None else None
        if row is None:
            raise WorldError(f"{self.label} {key} not found")
        return row


def _column(spec: WorldSpec, name: str, f: FieldSpec) -> Column[Any]:
    if f.type == "ref":
        target = spec.table_of(f.entity or "")
        return Column(name, String, ForeignKey(f"{target}.id"), nullable=f.optional, index=True)
    return Column(name, _COLUMN_TYPES.get(f.type, String), nullable=f.optional, index=f.searchable or f.type == "enum")


def _table(spec: WorldSpec, entity: str, metadata: MetaData) -> Table:
    e = spec.entities[entity]
    columns: list[Any] = [Column("id", String, primary_key=True)]
    columns += [_column(spec, name, f) for name, f in e.fields.items()]
    uniques = [[n] for n, f in e.fields.items() if f.unique]
    uniques += [i.fields for i in spec.invariants if i.kind == "unique" and i.entity == entity and i.fields]
    columns += [UniqueConstraint(*names, name=f"uq_{entity}_{'_'.join(names)}") for names in uniques]
    return Table(spec.table_of(entity), metadata, *columns)


def value_type(f: FieldSpec) -> Any:
    """The Python type of a field as tools show it (money in dollars, dates as ISO text)."""
    if f.type == "enum":
        return Literal[tuple(f.values or [])]
    return _PY_TYPES.get(f.type, str)


def _view(spec: WorldSpec, entity: str) -> type[BaseModel]:
    e = spec.entities[entity]
    fields: dict[str, Any] = {id_arg(entity): (str, Field(description=f"The {spec.label_of(entity).lower()}'s id."))}
    for name, f in e.fields.items():
        kind = value_type(f)
        fields[name] = (kind | None if f.optional else kind, Field(description=f.description or None))
    view: type[BaseModel] = create_model(f"{class_name(entity)}View", **fields)
    return view


def _page(entity: str, view: type[BaseModel]) -> type[BaseModel]:
    """A page of an entity's rows: the rows, how many match in all, where the next page starts."""
    page: type[BaseModel] = create_model(
        f"{class_name(entity)}Page",
        items=(list[view], ...),  # type: ignore[valid-type]
        total=(int, Field(description="How many rows match in all.")),
        next_offset=(int | None, Field(description="The offset of the next page, if any.")),
    )
    return page


def _transfer(entity: str, view: type[BaseModel]) -> type[BaseModel]:
    transfer: type[BaseModel] = create_model(f"{class_name(entity)}Transfer", source=(view, ...), target=(view, ...))
    return transfer


def argument_type(f: FieldSpec, *, description: str, optional: bool = False) -> Any:
    """An argument's annotation with the field's constraints (money in dollars)."""
    constraints: dict[str, Any] = {}
    scale = 100 if f.type == "money" else 1
    if f.min is not None and f.type in ("int", "float", "money"):
        constraints["ge"] = int(f.min) / scale if f.type == "money" else f.min
    if f.max is not None and f.type in ("int", "float", "money"):
        constraints["le"] = int(f.max) / scale if f.type == "money" else f.max
    if f.type in ("str", "ref"):
        constraints["min_length"] = f.min_length if f.min_length is not None else 1
        constraints["max_length"] = f.max_length or (40 if f.type == "ref" else DEFAULT_MAX_TEXT)
        if f.pattern:
            constraints["pattern"] = f.pattern
    if f.type == "date":
        constraints["pattern"] = ISO_DATE
    if f.type == "datetime":
        constraints["pattern"] = ISO_DATETIME
    inner = Annotated[value_type(f), Field(**constraints)] if constraints else value_type(f)
    if optional:
        return Annotated[inner | None, Field(description=description)]
    return Annotated[inner, Field(description=description)]


def id_type(label: str, example: str) -> Any:
    return Annotated[str, Field(description=f"A {label.lower()} id, such as {example}.", min_length=1, max_length=40)]


def keyword(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def build_entities(spec: WorldSpec) -> tuple[MetaData, dict[str, EntityModel]]:
    """Tables on a metadata of this world's own and a class mapped to each on a registry of its own."""
    metadata = MetaData()
    mapper = registry(metadata=metadata)
    models: dict[str, EntityModel] = {}
    for entity in spec.entities:  # refs resolve by table name, so the order does not matter
        table = _table(spec, entity, metadata)
        label = spec.label_of(entity)
        row = type(class_name(entity), (), {"__label__": label, "__module__": __name__})
        mapper.map_imperatively(row, table)
        e = spec.entities[entity]
        state = e.state_machine.field if e.state_machine else None
        view = _view(spec, entity)
        models[entity] = EntityModel(
            entity, e, label, table, row, view, id_arg(entity), state, _page(entity, view), _transfer(entity, view)
        )
    for entity, e in spec.entities.items():
        for name, f in e.fields.items():
            if f.type == "ref" and f.entity:
                models[f.entity].referenced_by.append((entity, name))
    return metadata, models


def ref_target(spec: WorldSpec, entity: str, alias: str) -> str | None:
    """The field of `entity` that holds the id of the row called `alias`."""
    for name, f in spec.entities[entity].fields.items():
        if f.type == "ref" and alias_of(name) == alias:
            return name
    return None
