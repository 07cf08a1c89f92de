"""A model's view of a twin's operations: a model (a `ChatClient`) checks each tool's inferred
operation, and its answer is kept where every name it gives exists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcpsim.acceptance import ReplyCache, json_object, prompt, response_format
from mcpsim.trajectories import Message
from mcpsim.twins._schemas import inline_refs, object_items, properties_of
from mcpsim.twins._twin_spec import WRITES, Operation, TwinSpec, TwinTool


def operation_problem(spec: TwinSpec, tool: TwinTool, operation: Operation) -> str | None:
    """Why an operation cannot serve a tool (a name that does not exist), or None."""
    if operation.kind == "call":
        return None
    if tool.read_only and operation.kind in WRITES:
        return f"the server marks {tool.name} read-only; {operation.kind} writes"
    entity = spec.entities.get(operation.entity or "")
    if entity is None:
        return f"unknown entity {operation.entity!r} (entities: {sorted(spec.entities)})"
    arguments = properties_of(inline_refs(tool.input_schema))
    for role in ("items", "keys", "query", "target"):
        name = getattr(operation, role)
        if name is not None and name not in arguments:
            return f"{role}: {tool.name} has no argument {name!r}"
    if operation.kind in ("append", "remove_items"):
        items = object_items(arguments.get(operation.items or "", {}))
        if items is None or operation.field not in entity.properties:
            return f"{operation.kind} needs items (a list of records) and a list field of {operation.entity}"
        if operation.ref not in items["properties"] or operation.values not in items["properties"]:
            return f"ref and values must be properties of the {operation.items} records"
    if operation.kind in ("read", "update", "delete") and operation.keys is None and operation.items is None:
        return f"{operation.kind} names its records: keys or items"
    if operation.kind == "rename" and (operation.keys is None or operation.target is None):
        return "rename needs keys and target"
    return None


async def refine_with_model(
    spec: TwinSpec, client: Any, *, cache_dir: Path | None = None
) -> tuple[TwinSpec, dict[str, Any]]:
    """Ask a model (a `ChatClient`) to check each tool's operation; keep its answer where every
    name it gives exists, else the heuristic's. Returns the spec and what the model changed,
    confirmed and had refused (with the reason)."""
    schema = {
        "type": "object",
        "properties": {"operations": {"type": "object", "additionalProperties": Operation.model_json_schema()}},
        "required": ["operations"],
    }
    entities = "\n".join(f"- {n}: key {e.key}, properties {sorted(e.properties)}" for n, e in spec.entities.items())
    tools = "\n".join(
        json.dumps(
            {
                "name": t.name,
                "description": t.description,
                "input_schema": t.input_schema,
                "output_schema": t.output_schema,
                "proposed": t.operation.model_dump(exclude_none=True),
            }
        )
        for t in spec.tools
    )
    messages = [
        Message(role="system", content=prompt("twin_operations")),
        Message(role="user", content=prompt("twin_tools", entities=entities or "(none found)", tools=tools)),
    ]
    reply, _, cached = await ReplyCache(cache_dir).ask(client, messages, response_format("twin_operations", schema))
    try:
        proposed = json_object(reply).get("operations")
    except (ValueError, AttributeError):
        proposed = None
    report: dict[str, Any] = {"cached": cached, "changed": {}, "confirmed": [], "refused": {}}
    if not isinstance(proposed, dict):
        report["refused"]["*"] = "the answer holds no operations object"
        return spec, report
    tools_out = []
    for tool in spec.tools:
        raw = proposed.get(tool.name)
        if raw is None:
            tools_out.append(tool)
            continue
        try:
            operation = Operation.model_validate(raw)
        except ValueError as exc:
            report["refused"][tool.name] = str(exc).splitlines()[0]
            tools_out.append(tool)
            continue
        if (problem := operation_problem(spec, tool, operation)) is not None:
            report["refused"][tool.name] = problem
            tools_out.append(tool)
        elif operation == tool.operation:
            report["confirmed"].append(tool.name)
            tools_out.append(tool)
        else:
            report["changed"][tool.name] = operation.model_dump(exclude_none=True)
            tools_out.append(tool.model_copy(update={"operation": operation}))
    return spec.model_copy(update={"tools": tools_out}), report
