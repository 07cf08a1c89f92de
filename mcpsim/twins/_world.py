"""A twin spec compiled into a `World`: one table per entity (the record as JSON under its key),
one tool per real tool with the real input schema taken verbatim (and checked with `jsonschema`),
bodies that carry out the inferred operation on the tables, and answers built from the real
output schema (checked against it before they leave the tool). `check_twin` serves the compiled
twin and compares it with the real server's tools."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any

import jsonschema
from mcp import Client

from mcpsim.engine import Episode, TemplateCache
from mcpsim.serve import build_server
from mcpsim.twins._names import words
from mcpsim.twins._operations import TwinTools
from mcpsim.twins._schemas import first_option, inline_refs, schema_equal, schema_validator
from mcpsim.twins._seeding import seed_twin
from mcpsim.twins._storage import ANSWERS_TABLE, build_tables, key_of, table_name
from mcpsim.twins._tool_signatures import tool_function
from mcpsim.twins._twin_spec import TwinSpec, TwinTool
from mcpsim.world import World

EPOCH = datetime.fromisoformat("2026-05-15T09:00:00+00:00")


def compile_twin(spec: TwinSpec) -> World:
    metadata, tables = build_tables(spec)
    policy = f"# {spec.title}\n\n{spec.description}\n"
    world = World(
        spec.name,
        title=spec.title,
        description=spec.description,
        metadata=metadata,
        policy=policy,
        scales={"default": {}, "small": {}},
        epoch=EPOCH,
        revision=f"twin-{spec.digest()}",
    )
    runner = TwinTools(spec, {**tables, ANSWERS_TABLE: metadata.tables[ANSWERS_TABLE]})
    for tool in spec.tools:
        world.tool(
            name=tool.name,
            title=tool.title,
            read_only=tool.read_only,
            destructive=tool.destructive and not tool.read_only,
            idempotent=tool.idempotent,
        )(tool_function(runner, tool))
        registered = world.tools[tool.name]  # listed over MCP as the real server listed them
        world.tools[tool.name] = replace(
            registered, listed_input_schema=tool.input_schema, listed_output_schema=tool.output_schema
        )
    world.seeder(lambda ctx: seed_twin(spec, tables, ctx))
    return world


# -- checking a twin against the real server's surface -----------------------------------------


def sample_arguments(spec: TwinSpec, tool: TwinTool, existing: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Arguments that satisfy the tool's input schema, naming existing records where the tool
    reads, changes or deletes one, and new ones where it creates."""
    op = tool.operation
    entity = spec.entities.get(op.entity or "")
    rows = existing.get(op.entity or "", [])
    known = [key_of(entity, r) for r in rows] if entity is not None else []
    creating = op.kind in ("create", "upsert")

    def text(name: str) -> str:
        if name in (op.keys, op.ref) and known and known[0] is not None:
            return known[0]
        if words(name)[:1] == ["old"] and rows and entity is not None:  # an edit names text that is there
            texts = [v for k, v in rows[0].items() if k not in entity.key and isinstance(v, str) and v]
            return texts[0][:4] if texts else "sample"
        if entity is not None and name in entity.key and creating:
            return f"/twin/new-{name}.txt" if words(name)[-1:] == ["path"] else f"new-{name}"
        if name == op.target:
            return "/twin/renamed.txt"
        return "sample"

    def value(name: str, schema: dict[str, Any]) -> Any:
        schema = first_option(schema)
        if "default" in schema:
            return schema["default"]
        if "enum" in schema:
            return schema["enum"][0]
        kind = schema.get("type")
        if kind == "object":
            props = schema.get("properties") or {}
            return {k: value(k, v) for k, v in props.items() if k in (schema.get("required") or props)}
        if kind == "array":
            items = schema.get("items") if isinstance(schema.get("items"), dict) else {"type": "string"}
            assert isinstance(items, dict)
            props = set(items.get("properties") or {})
            if name == op.items and entity is not None and not creating and rows and props <= set(entity.properties):
                return [{k: v for k, v in rows[0].items() if k in props}]
            return [value(name, items)]
        if kind in ("integer", "number"):
            return max(1, int(schema.get("minimum", 1)))
        if kind == "boolean":
            return False
        return text(name)

    schema = inline_refs(tool.input_schema)  # pydantic parameters (`notes: list[Note]`) arrive as $defs and $ref
    return value(
        "", {"type": "object", **{k: v for k, v in schema.items() if k not in ("$schema", "$defs", "definitions")}}
    )


async def check_twin(spec: TwinSpec, real_tools: list[dict[str, Any]], *, seed: int = 0) -> dict[str, Any]:
    """Serve the twin in memory to the SDK's client and compare it with the real server's tools:
    every tool present, its input and output schemas equal as listed (`schema_equal`), and its
    answer to sample arguments valid against the real output schema (a fresh episode per tool)."""
    spec = spec.model_copy(update={"synthetic_rows": max(spec.synthetic_rows, 3)})  # records to name
    world = compile_twin(spec)
    templates = TemplateCache(None)
    episode = Episode.create(world, seed, "default", templates=templates)
    existing = {
        name: [json.loads(r["data"]) for r in episode.query(f'SELECT data FROM "{table_name(name)}" ORDER BY pos')]
        for name in spec.entities
    }
    real = {t["name"]: t for t in real_tools}
    answers: dict[str, dict[str, Any]] = {}
    async with Client(build_server(world, lambda _id: episode)) as client:
        listed = (await client.list_tools()).tools
        published = {t.name: t.input_schema for t in listed}
        published_output = {t.name: t.output_schema for t in listed}
        for tool in spec.tools:
            episode.close()
            episode = Episode.create(world, seed, "default", templates=templates)
            args = sample_arguments(spec, tool, existing)
            result = await client.call_tool(tool.name, args)
            problem = None
            output = real.get(tool.name, {}).get("outputSchema")
            if output is not None and not result.is_error:
                found = jsonschema.exceptions.best_match(
                    schema_validator(output).iter_errors(result.structured_content)
                )
                problem = found.message if found is not None else None
            text = "\n".join(getattr(c, "text", "") for c in result.content)
            answers[tool.name] = {"arguments": args, "is_error": result.is_error, "schema_problem": problem}
            if result.is_error:
                answers[tool.name]["error"] = text
    episode.close()
    equal = [n for n in real if n in published and schema_equal(real[n].get("inputSchema") or {}, published[n])]
    outputs = [n for n in real if n in published and schema_equal(real[n].get("outputSchema"), published_output[n])]
    return {
        "tools": len(real),
        "mirrored": sum(1 for n in real if n in published),
        "schemas_equal": len(equal),
        "schema_differs": sorted(n for n in real if n in published and n not in equal),
        "output_schemas_equal": len(outputs),
        "output_schema_differs": sorted(n for n in real if n in published and n not in outputs),
        "missing": sorted(n for n in real if n not in published),
        "answers_ok": sum(1 for a in answers.values() if not a["is_error"] and a["schema_problem"] is None),
        "answers": answers,
        "operations": {t.name: t.operation.kind for t in spec.tools},
        "entities": {name: e.key for name, e in spec.entities.items()},
    }
