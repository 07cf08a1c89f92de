"""A compiled world's seeder: rows per entity at the chosen scale, drawn from the seeded Faker and
random sources of the `SeedContext` (never the wall clock), referenced entities first."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mcpsim.specs._lint import seeding_order
from mcpsim.specs._spec import (
    ChoiceGen,
    ConstGen,
    DateRangeGen,
    FakerGen,
    FieldSpec,
    RangeGen,
    RefGen,
    WorldSpec,
)
from mcpsim.specs._tables import EntityModel
from mcpsim.world import SeedContext

UNIQUE_ATTEMPTS = 50


class SeedError(RuntimeError):
    """A spec whose data cannot be generated (a unique field whose generator repeats itself)."""


def _generated(ctx: SeedContext, f: FieldSpec) -> Any:
    gen = f.generator
    if isinstance(gen, FakerGen):
        value: Any = getattr(ctx.faker, gen.faker)(**gen.args)
    elif isinstance(gen, ChoiceGen):
        value = ctx.rng.choices(gen.choices, weights=gen.weights)[0]
    elif isinstance(gen, RangeGen):
        low, high = gen.range
        value = (
            ctx.rng.randint(int(low), int(high)) if f.type in ("int", "money") else round(ctx.rng.uniform(low, high), 2)
        )
    elif isinstance(gen, DateRangeGen):
        moment = ctx.now + timedelta(days=ctx.rng.randint(*gen.days), seconds=ctx.rng.randint(0, 86_399))
        value = moment.date().isoformat() if f.type == "date" else moment.isoformat()
    elif isinstance(gen, ConstGen):
        value = gen.const
    else:
        value = f.default
    return _coerced(f, value)


def _coerced(f: FieldSpec, value: Any) -> Any:
    if value is None:
        return None
    if f.type in ("str", "enum", "date", "datetime"):
        text = str(value)
        return text[: f.max_length] if f.max_length else text
    if f.type in ("int", "money"):
        return int(value)
    if f.type == "float":
        return float(value)
    if f.type == "bool":
        return bool(value)
    return value


class Seeder:
    def __init__(self, spec: WorldSpec, models: dict[str, EntityModel]) -> None:
        self.spec = spec
        self.models = models

    def __call__(self, ctx: SeedContext) -> None:
        ids: dict[str, list[str]] = {}
        for entity in seeding_order(self.spec):
            rows = self._rows(ctx, entity, ctx.params.get(entity, 0), ids)
            ids[entity] = [r["id"] for r in rows]
            ctx.insert(self.models[entity].table, rows)

    def _rows(self, ctx: SeedContext, entity: str, count: int, ids: dict[str, list[str]]) -> list[dict[str, Any]]:
        e = self.spec.entities[entity]
        seen: dict[str, set[Any]] = {name: set() for name, f in e.fields.items() if f.unique}
        rows = []
        for _ in range(count):
            row: dict[str, Any] = {"id": ctx.ids.new(entity)}
            for name, f in e.fields.items():
                row[name] = self._value(ctx, entity, name, f, ids, seen)
            rows.append(row)
        return rows

    def _value(
        self,
        ctx: SeedContext,
        entity: str,
        name: str,
        f: FieldSpec,
        ids: dict[str, list[str]],
        seen: dict[str, set[Any]],
    ) -> Any:
        if f.type == "ref" and (f.generator is None or isinstance(f.generator, RefGen)):
            return self._reference(ctx, entity, name, f, ids)
        if f.generator is None and self._is_state(entity, name) and f.default is None:
            machine = self.spec.entities[entity].state_machine
            return machine.initial if machine else None
        if name not in seen:
            return _generated(ctx, f)
        for _ in range(UNIQUE_ATTEMPTS):
            value = _generated(ctx, f)
            if value not in seen[name]:
                seen[name].add(value)
                return value
        raise SeedError(f"{entity}.{name} is unique, but its generator gave {UNIQUE_ATTEMPTS} repeats in a row")

    def _reference(self, ctx: SeedContext, entity: str, name: str, f: FieldSpec, ids: dict[str, list[str]]) -> Any:
        pool = ids.get(f.entity or "", [])
        if not pool:
            if f.optional:
                return None
            raise SeedError(f"{entity}.{name} refers to {f.entity}, which has no rows at this scale")
        return ctx.rng.choice(pool)

    def _is_state(self, entity: str, name: str) -> bool:
        machine = self.spec.entities[entity].state_machine
        return machine is not None and machine.field == name
