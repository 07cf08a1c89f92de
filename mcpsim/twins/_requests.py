"""A twin task's request in words: what a write asks for (the record's key and values), the change
an action makes, and the templates a task's instruction and a lookup's question are worded from."""

from __future__ import annotations

import json
from typing import Any

from mcpsim.taskgen import plural
from mcpsim.twins._storage import key_of
from mcpsim.twins._twin_spec import TwinSpec, TwinTool

REQUESTS = (
    "{greeting}. Could you {request}?",
    "{greeting}. Please {request}. Thanks!",
    "{greeting}. I need you to {request}.",
)
COUNT_ALL = (
    "{greeting}. How many {plural} are there?",
    "{greeting}. Could you tell me how many {plural} there are?",
)
COUNTS = (
    "{greeting}. How many {plural} match {query!r}?",
    "{greeting}. Could you count the {plural} that match {query!r} for me?",
)


def entity_label(entity: str) -> str:
    return entity.replace("_", " ")


def shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def record_words(spec: TwinSpec, tool: TwinTool, args: dict[str, Any]) -> str:
    """What a write asks for, in words: the record's key and values."""
    op = tool.operation
    entity = spec.entities[op.entity or ""]
    records = args.get(op.items) if op.items else [args]
    parts = []
    for record in records or []:
        if not isinstance(record, dict):
            continue
        values = [f"{k} {shown(v)}" for k, v in record.items() if k not in entity.key and v not in (None, [], "")]
        if len(entity.key) > 1:  # a relation: its key is its values
            parts.append(
                ", ".join(f"{k} {shown(record.get(k))}" for k in entity.key) + "".join(f", {v}" for v in values)
            )
            continue
        parts.append(f"{key_of(entity, record)}" + (f" ({', '.join(values)})" if values else ""))
    return "; ".join(parts)


def worded_request(spec: TwinSpec, tool: TwinTool, args: dict[str, Any]) -> str:
    op = tool.operation
    label = entity_label(op.entity or "")
    what = record_words(spec, tool, args)
    if op.kind in ("create", "upsert"):
        return f"add the {label} {what}" if op.items is None else f"add this {label}: {what}"
    if op.kind == "delete":
        keys = args.get(op.keys or "") if op.keys else None
        named = ", ".join(map(str, keys)) if isinstance(keys, list) else str(keys) if keys else what
        return f"delete the {label} {named}"
    if op.kind == "rename":
        return f"move the {label} {args.get(op.keys or '')} to {args.get(op.target or '')}"
    if op.kind in ("append", "remove_items"):
        items = [i for i in args.get(op.items or "") or [] if isinstance(i, dict)]
        listed = "; ".join(f"{i.get(op.ref or '')}: {shown(i.get(op.values or ''))}" for i in items)
        verb = "add" if op.kind == "append" else "remove"
        where = "to" if op.kind == "append" else "from"
        return f"{verb} these {op.field} {where} the {plural(label)} ({listed})"
    edits = [
        f"replace {old!r} with {new!r}"
        for v in args.values()
        if isinstance(v, list)
        for item in v
        if isinstance(item, dict) and len(pair := [x for x in item.values() if isinstance(x, str)]) == 2
        for old, new in [pair]
    ]
    key = args.get(op.keys or "")
    changes = ", ".join(edits) or ", ".join(f"{k} {shown(v)}" for k, v in args.items() if k != op.keys)
    return f"change the {label} {key}: {changes}"
