"""The data every episode of a twin starts with: the spec's seed rows (from recordings) and
synthetic records drawn from each entity's schema."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table

from mcpsim.twins._names import words
from mcpsim.twins._schemas import first_option, is_text, is_text_list
from mcpsim.twins._storage import key_of
from mcpsim.twins._twin_spec import TwinSpec
from mcpsim.world import SeedContext


def _synthetic(
    spec: TwinSpec, entity_name: str, n: int, ctx: SeedContext, keys: dict[str, list[str]]
) -> dict[str, Any]:
    entity = spec.entities[entity_name]
    record: dict[str, Any] = {}
    for name, schema in entity.properties.items():
        schema = first_option(schema)
        last = (words(name) or ["value"])[-1]
        others = [k for e, ks in keys.items() if e != entity_name for k in ks]
        if name in entity.key and len(entity.key) == 1:
            record[name] = f"/twin/{entity_name}{n}.txt" if last == "path" else f"{entity_name}-{n}"
        elif is_text(schema) and last in ("from", "to", "source", "target") and others:
            record[name] = ctx.rng.choice(others)
        elif "enum" in schema:
            record[name] = ctx.rng.choice(schema["enum"])
        elif is_text(schema):
            record[name] = ctx.faker.paragraph() if last in ("content", "text", "body") else ctx.faker.word()
        elif is_text_list(schema):
            record[name] = [ctx.faker.sentence() for _ in range(2)]
        elif schema.get("type") == "integer":
            record[name] = ctx.rng.randint(0, 100)
        elif schema.get("type") == "number":
            record[name] = round(ctx.rng.uniform(0, 100), 2)
        elif schema.get("type") == "boolean":
            record[name] = ctx.rng.random() < 0.5
        elif schema.get("type") == "array":
            record[name] = []
    return record


def seed_twin(spec: TwinSpec, tables: dict[str, Table], ctx: SeedContext) -> None:
    keys: dict[str, list[str]] = {}
    order = sorted(spec.entities, key=lambda e: len(spec.entities[e].key))  # single keys first: others refer to them
    for entity_name in order:
        entity = spec.entities[entity_name]
        records = [dict(r) for r in spec.seed_rows.get(entity_name, [])]
        records += [_synthetic(spec, entity_name, n, ctx, keys) for n in range(1, spec.synthetic_rows + 1)]
        rows: dict[str, dict[str, Any]] = {}
        for record in records:
            key = key_of(entity, record)
            if key is not None and key not in rows:
                rows[key] = {"id": key, "pos": len(rows) + 1, "data": record}
        ctx.insert(tables[entity_name], rows.values())
        keys[entity_name] = list(rows)
