"""What a twin's call did (`Outcome`), and its answer: a recorded answer given as it was
(`Replayed`), or one built from the real output schema (`Filler`) and checked against it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from mcpsim.twins._schemas import first_option, inline_refs, is_text_list, schema_validator
from mcpsim.twins._storage import key_of
from mcpsim.twins._twin_spec import TwinSpec, TwinTool


@dataclass
class Outcome:
    entity: str | None
    rows: list[dict[str, Any]] = field(default_factory=list)  # the rows the call touched or found
    items: list[dict[str, Any]] = field(default_factory=list)  # per-item results of append/remove_items
    related: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # other entities' rows to show
    message: str | None = None


def render(template: str, args: dict[str, Any], key: str | None = None) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "key":
            return key or ""
        found = args.get(name.removeprefix("args."))
        return match.group(0) if found is None else str(found)

    return re.sub(r"\{((?:args\.)?[A-Za-z_][A-Za-z0-9_]*)\}", value, template)


@dataclass
class Replayed:
    """A recorded answer, given as it was."""

    value: Any


class Filler:
    """An answer built from an output schema: lists of records from the rows, texts from the
    rows' fields or the call's message, counts from how many rows, flags true."""

    def __init__(self, spec: TwinSpec, tool: TwinTool, outcome: Outcome, args: dict[str, Any]) -> None:
        self.spec, self.tool, self.outcome, self.args = spec, tool, outcome, args

    def entity_of(self, items: dict[str, Any]) -> str | None:
        props = set(items.get("properties") or {})
        for name, e in self.spec.entities.items():
            if props and props <= set(e.properties) and set(e.key) <= props:
                return name
        return None

    def rows_for(self, entity: str) -> list[dict[str, Any]]:
        if entity == self.outcome.entity:
            return self.outcome.rows
        return self.outcome.related.get(entity, [])

    def value(self, name: str, schema: dict[str, Any], source: dict[str, Any] | None = None) -> Any:
        schema = first_option(schema)
        if "const" in schema:
            return schema["const"]
        if source is not None and name in source:
            return source[name]
        kind = schema.get("type")
        if kind == "object":
            return self.object(schema, source)
        if kind == "array":
            return self.array(schema, source)
        if "enum" in schema:
            return schema["enum"][0]
        if kind == "string":
            return self.text(name)
        if kind in ("integer", "number"):
            return len(self.outcome.rows or self.outcome.items)
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return self.text(name)

    def object(self, schema: dict[str, Any], source: dict[str, Any] | None = None) -> dict[str, Any]:
        required = set(schema.get("required") or [])
        result: dict[str, Any] = {}
        for name, sub in (schema.get("properties") or {}).items():
            if name in required or (source is not None and name in source):
                result[name] = self.value(name, sub, source)
        return result

    def array(self, schema: dict[str, Any], source: dict[str, Any] | None) -> list[Any]:
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        assert isinstance(items, dict)
        if source is not None and is_text_list(schema):
            return [v for v in source.get("__values", [])]
        if (entity := self.entity_of(first_option(items))) is not None:
            props = set(first_option(items).get("properties") or {})
            return [{k: v for k, v in row.items() if k in props} for row in self.rows_for(entity)]
        if first_option(items).get("type") == "object":
            return [self.object(first_option(items), item) for item in self.outcome.items]
        if is_text_list(schema) and self.outcome.entity:
            shown = self.spec.entities[self.outcome.entity]
            return [key_of(shown, row) for row in self.outcome.rows]
        return []

    def text(self, name: str) -> str:
        if self.outcome.message is not None:
            return self.outcome.message
        if len(self.outcome.rows) == 1 and isinstance(self.outcome.rows[0].get(name), str):
            return str(self.outcome.rows[0][name])
        return self.rendering()

    def rendering(self) -> str:
        """The rows as text: a record read alone is its only field (a file's content) or its
        JSON; several records are their keys, one a line."""
        rows, entity = self.outcome.rows, self.outcome.entity
        if entity is None:
            return "OK"
        e = self.spec.entities[entity]
        if len(rows) == 1 and self.tool.operation.kind == "read":
            others = [k for k in rows[0] if k not in e.key]
            if len(others) == 1 and isinstance(rows[0][others[0]], str):
                return str(rows[0][others[0]])
            return json.dumps(rows[0], indent=2, ensure_ascii=False)
        return "\n".join(str(key_of(e, row)) for row in rows)

    def answer(self) -> Any:
        schema = inline_refs(self.tool.output_schema) if self.tool.output_schema is not None else None
        if schema is None:
            return self.outcome.message if self.outcome.message is not None else self.rendering()
        built = self.object(first_option(schema))
        error = jsonschema.exceptions.best_match(schema_validator(schema).iter_errors(built))
        if error is not None:  # a simulator bug: the twin must answer in the real schema
            raise RuntimeError(f"twin answer of {self.tool.name} breaks its output schema: {error.message}")
        return built
