"""The runner's fast output-schema checks (`runner/schemacheck.py`) say yes only to what the SDK's
jsonschema validator accepts: on every published output schema of the four worlds, for instances
built from the schema and for mutations of them, and the errors a client sees are the SDK's."""

from __future__ import annotations

import copy
import random
from typing import Any

import anyio
import pytest
from jsonschema.validators import validator_for
from mcp import Client
from referencing import Registry

from mcpsim.runner._outputs import CheckedFirst, Unhandled, checked_first, compile_check
from mcpsim.serve._mcp import build_server
from mcpsim.world._registry import load_world

WORLDS = ("airline", "bank", "retail", "workspace")


def _published_schemas() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}

    async def main() -> None:
        for name in WORLDS:
            async with Client(build_server(load_world(name), lambda _id: None)) as client:
                for tool in (await client.list_tools()).tools:
                    if tool.output_schema:
                        out[f"{name}/{tool.name}"] = tool.output_schema

    anyio.run(main)
    return out


SCHEMAS = _published_schemas()


def _validator(schema: dict[str, Any]) -> Any:
    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, registry=Registry())  # as the SDK client compiles it


def _sample(schema: Any, rng: random.Random, depth: int = 0) -> Any:
    """An instance of `schema` (handled keywords only), optional properties sometimes left out."""
    if schema is True or not isinstance(schema, dict):
        return rng.choice([None, 1, "x"])
    types = schema.get("type", "object")
    kind = rng.choice(types) if isinstance(types, list) else types
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        return {k: _sample(v, rng, depth + 1) for k, v in props.items() if k in required or rng.random() < 0.7}
    if kind == "array":
        return [
            _sample(schema.get("items", True), rng, depth + 1) for _ in range(rng.randint(0, 2 if depth < 4 else 0))
        ]
    return {
        "string": lambda: rng.choice(["", "abc", "ünï"]),
        "integer": lambda: rng.choice([0, -3, 7, 2.0]),
        "number": lambda: rng.choice([0, 1.5, -2, 3.0]),
        "boolean": lambda: rng.choice([True, False]),
        "null": lambda: None,
    }[kind]()


BAD_VALUES = [None, True, 0, 2.5, "s", [], {}, [1, "a"], {"unexpected": 1}]


def _mutations(instance: Any, rng: random.Random) -> list[Any]:
    """Copies of `instance` with one value replaced, one key dropped or one key added."""
    paths: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                paths.append((node, k))
                walk(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                paths.append((node, i))
                walk(v)

    out = []
    for _ in range(12):
        twin = copy.deepcopy(instance)
        paths.clear()
        walk(twin)
        if not paths:
            out.append(rng.choice(BAD_VALUES))
            continue
        parent, key = rng.choice(paths)
        action = rng.random()
        if action < 0.6:
            parent[key] = copy.deepcopy(rng.choice(BAD_VALUES))
        elif action < 0.8 and isinstance(parent, dict):
            del parent[key]
        elif isinstance(parent, dict):
            parent[f"extra_{rng.randint(0, 9)}"] = 1
        out.append(twin)
    return out


def test_every_published_output_schema_is_handled():
    assert len(SCHEMAS) > 50
    for name, schema in SCHEMAS.items():
        assert isinstance(checked_first(_validator(schema), schema), CheckedFirst), name


@pytest.mark.parametrize("world", WORLDS)
def test_the_fast_check_agrees_with_jsonschema(world):
    rng = random.Random(15)
    valid = invalid = 0
    for name, schema in SCHEMAS.items():
        if not name.startswith(world + "/"):
            continue
        validator = _validator(schema)
        check = compile_check(schema)
        for _ in range(8):
            instance = _sample(schema, rng)
            for candidate in [instance, *_mutations(instance, rng)]:
                expected = validator.is_valid(candidate)
                assert check(candidate) == expected, (name, candidate)
                valid += expected
                invalid += not expected
    assert valid > 100 and invalid > 100  # both answers were exercised


def test_keywords_and_types_the_check_handles():
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "x": {"type": ["number", "null"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "meta": {"type": "object", "additionalProperties": {"type": "boolean"}},
        },
        "required": ["n"],
        "additionalProperties": False,
    }
    validator = _validator(schema)
    check = compile_check(schema)
    cases = [
        {"n": 1},
        {"n": 1.0},  # an integer, for JSON Schema
        {"n": 1.5},
        {"n": True},  # a boolean is not an integer
        {"x": 1},
        {"n": 1, "x": None},
        {"n": 1, "x": False},
        {"n": 1, "tags": ["a", 2]},
        {"n": 1, "tags": ("a",)},  # a tuple is not a JSON array
        {"n": 1, "meta": {"a": True, "b": 0}},
        {"n": 1, "meta": {"a": True}},
        {"n": 1, "other": 1},
        [],
    ]
    assert [check(c) for c in cases] == [validator.is_valid(c) for c in cases]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "minLength": 3},
        {"$ref": "#/$defs/a", "$defs": {"a": {"type": "string"}}},
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        {"type": "array", "items": [{"type": "string"}]},
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
        {"type": "decimal"},
    ],
)
def test_anything_else_is_left_to_the_sdk_validator(schema):
    with pytest.raises(Unhandled):
        compile_check(schema)
    validator = validator_for(schema)(schema, registry=Registry())
    assert checked_first(validator, schema) is validator


def test_an_invalid_result_gets_the_sdk_validators_errors():
    schema = SCHEMAS["retail/get_order_details"]
    validator = _validator(schema)
    wrapped = checked_first(validator, schema)
    bad = {"order_id": 5}
    assert [e.message for e in wrapped.iter_errors(bad)] == [e.message for e in validator.iter_errors(bad)]
    assert list(wrapped.iter_errors(bad))
    assert wrapped.schema is validator.schema  # the rest of the interface is the validator's
