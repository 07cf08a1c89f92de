"""Schema-shaped tool arguments drawn from an episode's rows, for the baselines that look for
an unrequested write that succeeds (`mcpsim.audit._write_search`)."""

from __future__ import annotations

import random
from typing import Any

from mcpsim.engine import Episode

__all__ = ["RowSampler"]


class RowSampler:
    """Schema-shaped arguments whose values come from the episode's rows: a `card_id` is the id
    of a row of `cards`, and the other arguments of that call come from the same row where it has
    a column of their name (its `customer_id`), so calls mostly name records that exist and
    belong together."""

    FREE_TEXT = "Unrequested change"

    def __init__(self, episode: Episode, rng: random.Random) -> None:
        self.episode = episode
        self.rng = rng
        self.tables = sorted(episode.world.metadata.tables)
        self._counts: dict[str, int] = {}
        self._columns: dict[str, list[Any]] | None = None

    def arguments(self, schema: dict[str, Any], anchor: tuple[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        """Arguments for a tool of this input schema; `anchor` (a table and one of its rows)
        supplies the values it has, else a row of a table the arguments name is drawn."""
        defs = schema.get("$defs", {})
        if anchor is None:
            anchors = sorted({t for name in _property_names(schema, defs) for t in self._tables_for(name)})
            anchor = self._row(self.rng.choice(anchors)) if anchors else None
        value = self._value(schema, "", anchor, defs)
        return value if isinstance(value, dict) else {}

    def _tables_for(self, name: str) -> list[str]:
        """The tables whose ids an argument names: `card_id` -> cards, `from_account_id` ->
        accounts, `thread_ids` -> threads."""
        for suffix in ("_ids", "_id"):
            if name.endswith(suffix):
                base = name[: -len(suffix)]
                return [t for t in self.tables if (base + "s").endswith(t) or (base + "es").endswith(t)]
        return []

    def _row(self, table: str) -> tuple[str, dict[str, Any]] | None:
        if table not in self._counts:
            self._counts[table] = self.episode.query(f'SELECT count(*) AS n FROM "{table}"')[0]["n"]
        if not self._counts[table]:
            return None
        row = self.episode.query(
            f'SELECT * FROM "{table}" LIMIT 1 OFFSET ?', (self.rng.randrange(self._counts[table]),)
        )
        return (table, row[0]) if row else None

    def _column_values(self, name: str) -> list[Any]:
        if self._columns is None:
            self._columns = {}
            for table in self.tables:
                for row in self.episode.query(f'SELECT * FROM "{table}" LIMIT 50'):
                    for column, value in row.items():
                        if value is not None:
                            self._columns.setdefault(column, []).append(value)
        return self._columns.get(name, [])

    def _value(
        self, schema: dict[str, Any], name: str, anchor: tuple[str, dict[str, Any]] | None, defs: dict[str, Any]
    ) -> Any:
        if "$ref" in schema:
            return self._value(defs.get(schema["$ref"].split("/")[-1], {}), name, anchor, defs)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
                return self._value(self.rng.choice(options), name, anchor, defs)
        if "enum" in schema or "const" in schema:  # a value the schema fixes: one of its list, or the one
            return self.rng.choice(schema["enum"]) if "enum" in schema else schema["const"]
        kind = schema.get("type")
        if kind == "object":
            required = set(schema.get("required", []))
            return {
                k: self._value(v, k, anchor, defs)
                for k, v in schema.get("properties", {}).items()
                if k in required or self.rng.random() < 0.3
            }
        if kind == "array":
            return [
                self._value(schema.get("items", {}), name, anchor, defs)
                for _ in range(max(1, schema.get("minItems", 1)))
            ]
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind in ("integer", "number"):
            return self._number(schema, kind)
        return self._string(name, anchor)

    def _number(self, schema: dict[str, Any], kind: str) -> int | float:
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        high = min(schema.get("maximum", low + 20), low + 20)
        value = self.rng.uniform(max(low, 1), max(low, high, 1))
        return int(value) if kind == "integer" else round(value, 2)

    def _string(self, name: str, anchor: tuple[str, dict[str, Any]] | None) -> Any:
        if anchor is not None:
            table, row = anchor
            if table in self._tables_for(name) and "id" in row:
                return row["id"]
            if name in row and isinstance(row[name], str):
                return row[name]
        tables = self._tables_for(name)
        if tables:
            other = self._row(self.rng.choice(tables))
            if other is not None and "id" in other[1]:
                return other[1]["id"]
        values = [
            v for v in self._column_values(name) or self._column_values(name.removesuffix("s")) if isinstance(v, str)
        ]
        return self.rng.choice(values) if values else self.FREE_TEXT


def _property_names(schema: dict[str, Any], defs: dict[str, Any]) -> set[str]:
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "$ref" in node:
                walk(defs.get(node["$ref"].split("/")[-1], {}))
            for key, value in node.get("properties", {}).items():
                names.add(key)
                walk(value)
            for key in ("items", "anyOf", "oneOf"):
                walk(node.get(key))
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(schema)
    return names
