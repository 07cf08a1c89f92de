"""The twin's tables: one per entity (each record as JSON under its key, in insertion order) and
the count of each recorded answer's replays; a record's key; and `Store`, the tables as one
call's transaction reads and writes them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, Column, Integer, MetaData, String, Table, delete, func, insert, select, update

from mcpsim.twins._twin_spec import TwinEntity, TwinSpec
from mcpsim.world import ToolContext

ANSWERS_TABLE = "twin_answers"  # how many times each recorded answer was replayed (episode state)


def table_name(entity: str) -> str:
    return f"{entity}_records"


def build_tables(spec: TwinSpec) -> tuple[MetaData, dict[str, Table]]:
    metadata = MetaData()
    tables = {
        entity: Table(
            table_name(entity),
            metadata,
            Column("id", String, primary_key=True),
            Column("pos", Integer, nullable=False, index=True),
            Column("data", JSON, nullable=False),
        )
        for entity in spec.entities
    }
    Table(ANSWERS_TABLE, metadata, Column("id", String, primary_key=True), Column("used", Integer, nullable=False))
    return metadata, tables


def key_of(entity: TwinEntity, record: dict[str, Any]) -> str | None:
    values = [record.get(k) for k in entity.key]
    if any(v is None for v in values):
        return None
    return str(values[0]) if len(values) == 1 else json.dumps(values)


@dataclass
class Store:
    """The entity tables of one call's transaction."""

    ctx: ToolContext
    spec: TwinSpec
    tables: dict[str, Table]

    def rows(self, entity: str) -> list[dict[str, Any]]:
        table = self.tables[entity]
        return [dict(r) for r in self.ctx.session.execute(select(table.c.data).order_by(table.c.pos)).scalars()]

    def get(self, entity: str, key: str) -> dict[str, Any] | None:
        table = self.tables[entity]
        found = self.ctx.session.execute(select(table.c.data).where(table.c.id == key)).scalar()
        return dict(found) if found is not None else None

    def put(self, entity: str, record: dict[str, Any], key: str) -> None:
        table = self.tables[entity]
        if self.get(entity, key) is not None:
            self.ctx.session.execute(update(table).where(table.c.id == key).values(data=record))
            return
        last = self.ctx.session.execute(select(func.max(table.c.pos))).scalar()
        self.ctx.session.execute(insert(table).values(id=key, pos=(last or 0) + 1, data=record))

    def remove(self, entity: str, key: str) -> None:
        table = self.tables[entity]
        self.ctx.session.execute(delete(table).where(table.c.id == key))

    def used(self, answer_id: str) -> int:
        """How many times this answer was given before; counts this time."""
        table = self.tables[ANSWERS_TABLE]
        before = self.ctx.session.execute(select(table.c.used).where(table.c.id == answer_id)).scalar()
        if before is None:
            self.ctx.session.execute(insert(table).values(id=answer_id, used=1))
            return 0
        self.ctx.session.execute(update(table).where(table.c.id == answer_id).values(used=before + 1))
        return int(before)
