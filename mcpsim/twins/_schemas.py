"""Reading JSON Schemas of tools: their properties, arrays of records, text and lists of text,
local references inlined, and when two input schemas are equal."""

from __future__ import annotations

import re
from typing import Any

import jsonschema


def properties_of(schema: dict[str, Any] | None) -> dict[str, Any]:
    return dict((schema or {}).get("properties") or {})


def object_items(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The item schema of an array of objects with properties, else None."""
    if schema.get("type") != "array" or not isinstance(schema.get("items"), dict):
        return None
    items = schema["items"]
    return items if items.get("type") == "object" and items.get("properties") else None


def is_text(schema: dict[str, Any]) -> bool:
    if schema.get("type") == "string":
        return True
    options = schema.get("anyOf") or schema.get("oneOf") or []
    return any(o.get("type") == "string" for o in options if isinstance(o, dict))


def is_text_list(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "array" and isinstance(schema.get("items"), dict) and is_text(schema["items"])


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with its local references (`#/$defs/X`, `#/definitions/X`) replaced by what
    they name; a reference inside its own definition (a recursive schema) becomes `{}` (any)."""
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}

    def walk(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [walk(n, seen) for n in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and (name := re.sub(r"^#/(\$defs|definitions)/", "", ref)) != ref:
            if name in seen or name not in defs:
                return {}
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return walk({**defs[name], **rest}, seen | {name})
        return {k: walk(v, seen) for k, v in node.items() if k not in ("$defs", "definitions")}

    return dict(walk(schema, frozenset()))


def schema_equal(real: dict[str, Any], twin: dict[str, Any]) -> bool:
    """Input schemas are equal when they have the same properties (each one's schema identical,
    descriptions included, local `$ref`s resolved), the same required set, and the same type. The
    top-level `$schema`, `title` and `additionalProperties` keywords are not compared: the SDK
    writes its own."""
    real, twin = inline_refs(real), inline_refs(twin)
    return (
        real.get("type", "object") == twin.get("type", "object")
        and properties_of(real) == properties_of(twin)
        and set(real.get("required") or []) == set(twin.get("required") or [])
    )


def schema_validator(schema: dict[str, Any]) -> Any:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def first_option(schema: dict[str, Any]) -> dict[str, Any]:
    """The first alternative of a schema that is not null: of `anyOf`/`oneOf`, or of a list of
    types (`"type": ["integer", "null"]`)."""
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        usable = [o for o in options if isinstance(o, dict) and o.get("type") != "null"]
        return usable[0] if usable else options[0]
    kinds = schema.get("type")
    if isinstance(kinds, list) and kinds:
        return schema | {"type": next((k for k in kinds if k != "null"), kinds[0])}
    return schema
