"""Reading JSON Schemas of tools: their properties, arrays of records, text and lists of text,
local references inlined, and when two input schemas are equal."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import jsonschema

from mcpsim._patterns import pattern_problem, searches


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


def schema_equal(real: dict[str, Any] | None, twin: dict[str, Any] | None) -> bool:
    """Schemas are equal when they are the same JSON value: every keyword at every level (the
    top-level `$schema`, `title` and `additionalProperties`, descriptions, `$defs` and `$ref`s as
    written), key order aside. `true` and `1` differ, as they do in JSON."""
    return json.dumps(real, sort_keys=True) == json.dumps(twin, sort_keys=True)


def schema_validator(schema: dict[str, Any]) -> Any:
    """A `jsonschema` validator for the schema's draft whose patterns (`pattern`,
    `patternProperties`, and `additionalProperties` beside them) are searched in linear time
    (`mcpsim._patterns`): an agent's argument cannot make a backtracking pattern such as
    `(a+)+$` run for hours. A pattern the linear engine cannot run (look-around, backreferences)
    refuses the value with the reason."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return _linear(cls)(schema)


@cache
def _linear(cls: Any) -> Any:
    keywords = {"pattern": _pattern, "patternProperties": _pattern_properties}
    original = cls.VALIDATORS.get("additionalProperties")
    if original is not None:

        def additional(validator: Any, extra: Any, instance: Any, schema: dict[str, Any]) -> Any:
            if "patternProperties" not in schema:  # jsonschema's own, and its messages
                return original(validator, extra, instance, schema)
            return _additional_properties(validator, extra, instance, schema)

        keywords["additionalProperties"] = additional
    return jsonschema.validators.extend(cls, keywords)


def _search(pattern: Any, text: str) -> tuple[bool, str | None]:
    """(whether `pattern` is found in `text`, why it cannot be checked)."""
    if not isinstance(pattern, str):
        return False, f"the schema's pattern {pattern!r} is not text"
    if (problem := pattern_problem(pattern)) is not None:
        return False, f"the schema's pattern {pattern[:80]!r} cannot be checked in linear time: {problem}"
    return searches(pattern, text), None


def _pattern(validator: Any, pattern: Any, instance: Any, schema: dict[str, Any]) -> Any:
    if not validator.is_type(instance, "string"):
        return
    found, problem = _search(pattern, instance)
    if problem is not None:
        yield jsonschema.ValidationError(problem)
    elif not found:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: dict[str, Any]) -> Any:
    if not validator.is_type(instance, "object") or not isinstance(patterns, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            found, problem = _search(pattern, key)
            if problem is not None:
                yield jsonschema.ValidationError(problem)
                return
            if found:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: dict[str, Any]) -> Any:
    if not validator.is_type(instance, "object"):
        return
    named = schema.get("properties") or {}
    patterns = list(schema.get("patternProperties") or {})
    extras = []
    for key in instance:
        if key in named:
            continue
        searched = [_search(p, key) for p in patterns]
        if problem := next((why for _, why in searched if why), None):
            yield jsonschema.ValidationError(problem)
            return
        if not any(found for found, _ in searched):
            extras.append(key)
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif extra is False and extras:
        listed, verb = ", ".join(repr(k) for k in sorted(extras)), "does" if len(extras) == 1 else "do"
        yield jsonschema.ValidationError(f"{listed} {verb} not match any of the regexes")


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
