"""The random agent's arguments (`RandomAgent` in `_agents`): negative data that changes state.
The agent sees only what any agent sees (the tools and the results of its own calls), so it
learns the world's data by calling it: it starts with the tools that need no argument, then fills
an argument from the values its results showed under the same name (an `order_id` from a
result's `order_id`, or the `id` of a record listed under `orders`), numbers in range and the
schema's enums. A share of its calls (`malformed`) keeps schema-shaped noise, for the error paths."""

from __future__ import annotations

import json
import random
import re
import string
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from mcpsim.trajectories import Message

__all__ = ["MALFORMED", "Seen", "sample_arguments"]

MALFORMED = 0.1  # the default share of calls whose arguments are schema-shaped noise
_SHORTEST, _LONGEST = 3, 40  # the strings from results worth reusing


@dataclass
class Seen:
    """The values an agent's results showed: by the key they stood under, and all of them."""

    by_key: dict[str, list[Any]]
    strings: list[str]

    @classmethod
    def of(cls, messages: list[Message]) -> Seen:
        """What the results showed, and the words of the user's messages (an e-mail address, an
        id, a name the user gave: what any agent starts from)."""
        by_key: defaultdict[str, set[Any]] = defaultdict(set)
        said: set[str] = set()
        for m in messages:
            if m.role == "tool" and m.content:
                try:
                    _walk(json.loads(m.content), "", by_key)
                except ValueError:
                    continue
            elif m.role == "user" and m.content:
                said.update(w.strip(".,;:!?()'\"") for w in m.content.split())
        strings = {v for values in by_key.values() for v in values if isinstance(v, str)}
        strings |= {w for w in said if _SHORTEST <= len(w) <= _LONGEST}
        return cls({k: sorted(v, key=repr) for k, v in by_key.items()}, sorted(strings))

    def values(self, name: str) -> list[Any]:
        """What the results showed for an argument called `name`: under that key, else the ids of
        records listed under a key that names its kind (`order_id` <- `orders[].id`)."""
        if self.by_key.get(name):
            return self.by_key[name]
        stem = name.removesuffix("_id").removesuffix("_ids")
        if stem != name and stem:
            return self.by_key.get(f"{stem}.id", [])
        return []


def _walk(value: Any, parent: str, into: defaultdict[str, set[Any]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str | int | float) and not isinstance(item, bool):
                if not isinstance(item, str) or _SHORTEST <= len(item) <= _LONGEST:
                    into[key].add(item)
                    if key == "id" and parent:
                        into[f"{parent}.id"].add(item)
            else:
                _walk(item, key, into)
    elif isinstance(value, list):
        kind = parent.removesuffix("s") if parent.endswith("s") else parent
        for item in value:
            _walk(item, kind, into)


def sample_arguments(schema: dict[str, Any], rng: random.Random, seen: Seen) -> dict[str, Any]:
    """Arguments for a tool's input `schema`: every required one, a third of the others."""
    value = _sample(schema, rng, seen, schema.get("$defs", {}), "")
    return value if isinstance(value, dict) else {}


def _sample(schema: dict[str, Any], rng: random.Random, seen: Seen, defs: dict[str, Any], name: str) -> Any:
    if "$ref" in schema:
        return _sample(defs.get(schema["$ref"].split("/")[-1], {}), rng, seen, defs, name)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return _sample(rng.choice(options), rng, seen, defs, name)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        return {k: _sample(v, rng, seen, defs, k) for k, v in props.items() if k in required or rng.random() < 0.3}
    if kind == "array":
        low = schema.get("minItems", 1)
        count = rng.randint(low, max(low, min(schema.get("maxItems", 3), 3)))
        return [_sample(schema.get("items", {}), rng, seen, defs, name) for _ in range(count)]
    known = [v for v in seen.values(name) if _fits(v, schema)]
    if not known and kind == "string" and ("pattern" in schema or "format" in schema):
        known = [v for v in seen.strings if _fits(v, schema)]  # an e-mail address for an e-mail
    if known and rng.random() < 0.9:
        return rng.choice(known)
    return _fresh(schema, rng, seen, kind)


def _fits(value: Any, schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "string":
        if not isinstance(value, str):
            return False
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)):
            return False
        if schema.get("format") == "email" and "@" not in value:
            return False
        return "pattern" not in schema or re.search(schema["pattern"], value) is not None
    if kind == "integer":
        return isinstance(value, int) and schema.get("minimum", value) <= value <= schema.get("maximum", value)
    if kind == "number":
        return isinstance(value, int | float) and schema.get("minimum", value) <= value <= schema.get("maximum", value)
    return kind is None


def _fresh(schema: dict[str, Any], rng: random.Random, seen: Seen, kind: Any) -> Any:
    if kind == "integer":
        lo, hi = schema.get("minimum", 0), schema.get("maximum", 100)
        return rng.randint(int(lo), int(max(lo, min(hi, lo + 100))))
    if kind == "number":
        lo = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return round(rng.uniform(lo, lo + 200), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if seen.strings and rng.random() < 0.7:
        return rng.choice(seen.strings)
    low = schema.get("minLength", 3)
    length = rng.randint(low, max(low, min(schema.get("maxLength", 12), low + 9)))
    return " ".join(_word(rng) for _ in range(max(1, length // 6)))[:length].ljust(length, "x")


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 8)))
