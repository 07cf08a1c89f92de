"""The twin a task generator works on: its compiled world, the seeded episode every task starts
from, that episode's records, arguments for actions on them (naming existing records, with fresh
values where the actions write) and whether actions work."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from mcpsim.engine import Episode, TemplateCache
from mcpsim.tasks import Action
from mcpsim.twins._names import words
from mcpsim.twins._schemas import first_option, inline_refs, is_text, properties_of
from mcpsim.twins._storage import key_of
from mcpsim.twins._twin_spec import TwinSpec, TwinTool
from mcpsim.twins._world import compile_twin, sample_arguments
from mcpsim.world import derive_seed

SCALE = "default"
VOCABULARY = (  # values of new records: plain words, none of them a number
    "amber", "birch", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
    "kestrel", "lagoon", "maple", "nectar", "orchid", "pebble", "quartz", "raven", "saffron", "tundra",
)  # fmt: skip


class TwinSandbox:
    """The start episode of a twin's tasks and the random draws (one generator, in a fixed order)
    their arguments, plans and wording take."""

    def __init__(self, spec: TwinSpec, *, seed: int = 0) -> None:
        self.spec = spec
        self.world = compile_twin(spec)
        self.templates = TemplateCache(None)
        self.start = Episode.create(self.world, seed, SCALE, templates=self.templates)
        self.rng = random.Random(derive_seed(seed, "twin-tasks", spec.digest()))
        self.tools = [t for t in spec.tools if t.operation.kind != "call" and t.operation.entity in spec.entities]
        self.fresh = 0

    def close(self) -> None:
        self.start.close()

    def rows(self, episode: Episode, entity: str) -> list[dict[str, Any]]:
        table = f"{entity}_records"
        return [json.loads(r["data"]) for r in episode.query(f'SELECT data FROM "{table}" ORDER BY pos')]

    def existing(self, episode: Episode, first: dict[str, int] | None = None) -> dict[str, list[dict[str, Any]]]:
        """Every entity's rows, rotated so the one `first` names comes first (sample_arguments
        names the first row)."""
        found = {}
        for entity in self.spec.entities:
            rows = self.rows(episode, entity)
            n = (first or {}).get(entity, 0) % len(rows) if rows else 0
            found[entity] = rows[n:] + rows[:n]
        return found

    def word(self) -> str:
        self.fresh += 1
        return f"{self.rng.choice(VOCABULARY)}-{self.fresh}"

    def arguments(self, tool: TwinTool, existing: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        """Arguments naming existing records (the first of each entity), with new values where
        the tool writes them: a new key for a create (a path beside the existing ones), new text
        and list items, an edit of a whole word of the record's text."""
        args = sample_arguments(self.spec, tool, existing)
        op = tool.operation
        entity = self.spec.entities[op.entity or ""]
        rows = existing.get(op.entity or "", [])
        new_key = op.kind in ("create", "upsert")
        text = " ".join(record_texts({k: v for k, v in rows[0].items() if k not in entity.key})) if rows else ""

        def path() -> str:
            keys = [str(key_of(entity, r)) for r in rows if "/" in str(key_of(entity, r))]
            folder = keys[0].rsplit("/", 1)[0] if keys else "/twin"
            suffixes = [m.group(0) for k in keys if (m := re.search(r"\.[a-z0-9]+$", k))]
            suffix = suffixes[0] if suffixes else ".txt" if words(op.entity or "")[-1:] == ["file"] else ""
            return f"{folder}/{self.word()}{suffix}"

        def fresh(name: str, value: Any, schema: dict[str, Any], in_record: bool) -> Any:
            schema = first_option(schema)
            is_path = words(name)[-1:] == ["path"] or (name == op.target and words(entity.key[0])[-1:] == ["path"])
            if words(name)[:1] == ["old"] and isinstance(value, str) and value:
                found = re.search(rf"{re.escape(value)}\S*", text)
                return found.group(0) if found else value
            if value == "sample" or (in_record and name in entity.key and new_key) or name == op.target:
                if not is_text(schema) or "enum" in schema:
                    return value
                return path() if is_path else self.word()
            if isinstance(value, list) and value == ["sample"]:
                return [f"{self.word()} noted"]
            if isinstance(value, list) and name != op.items and all(isinstance(v, dict) for v in value):
                props = properties_of(first_option(first_option(schema).get("items") or {}))
                return [{k: fresh(k, v, props.get(k, {}), False) for k, v in r.items()} for r in value]
            return value

        schema = properties_of(inline_refs(tool.input_schema))
        out: dict[str, Any] = {}
        for name, value in args.items():
            items = first_option(schema.get(name, {})).get("items") or {}
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value) and name == op.items:
                props = properties_of(first_option(items))
                out[name] = [{k: fresh(k, v, props.get(k, {}), True) for k, v in r.items()} for r in value]
            else:
                out[name] = fresh(name, value, schema.get(name, {}), op.items is None)
        return out

    def works(self, episode: Episode, actions: list[Action]) -> bool:
        """Whether the actions all succeed on a fork of `episode` and change its rows."""
        fork = episode.fork(id="twin-tasks")
        try:
            before = fork.state_hash()
            if any(fork.call(a.tool, a.args).is_error for a in actions):
                return False
            return fork.state_hash() != before
        finally:
            fork.close()


def record_texts(row: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for value in row.values():
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            found += [v for v in value if isinstance(v, str)]
    return found
