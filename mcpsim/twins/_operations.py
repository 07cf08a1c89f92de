"""The twin's operations on its tables: create, upsert, read, list, update, delete, rename, append
and remove_items on an entity's records, and `call`, which replays recorded answers."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Table

from mcpsim.twins._answers import Filler, Outcome, Replayed, render
from mcpsim.twins._names import words
from mcpsim.twins._storage import Store, key_of
from mcpsim.twins._twin_spec import TwinEntity, TwinSpec, TwinTool
from mcpsim.world import ToolContext, WorldError


class TwinTools:
    def __init__(self, spec: TwinSpec, tables: dict[str, Table]) -> None:
        self.spec = spec
        self.tables = tables

    def not_found(self, tool: TwinTool, entity: str, key: str, args: dict[str, Any]) -> WorldError:
        if tool.not_found:
            return WorldError(render(tool.not_found, args, key))
        return WorldError(f"{entity.replace('_', ' ').capitalize()} {key} not found")

    def keys(self, tool: TwinTool, args: dict[str, Any]) -> tuple[list[str], bool]:
        """The keys a call names, and whether it named a single one."""
        raw = args.get(tool.operation.keys or "")
        if raw is None:
            return [], False
        return ([str(k) for k in raw], False) if isinstance(raw, list) else ([str(raw)], True)

    def records(self, tool: TwinTool, args: dict[str, Any]) -> list[dict[str, Any]]:
        op = tool.operation
        entity = self.spec.entities[op.entity or ""]
        if op.items:
            return [{k: v for k, v in item.items() if k in entity.properties} for item in args.get(op.items) or []]
        return [{k: v for k, v in args.items() if k in entity.properties and v is not None}]

    def run(self, tool: TwinTool, ctx: ToolContext, args: dict[str, Any]) -> Any:
        store = Store(ctx, self.spec, self.tables)
        op = tool.operation
        outcome = getattr(self, f"_{op.kind}")(tool, store, args)
        if isinstance(outcome, Replayed):
            return outcome.value
        if op.kind not in ("read", "list") and tool.ok_message:
            first = key_of(self.spec.entities[op.entity], outcome.rows[0]) if op.entity and outcome.rows else None
            outcome.message = render(tool.ok_message, args, first)
        return Filler(self.spec, tool, outcome, args).answer()

    def _create(self, tool: TwinTool, store: Store, args: dict[str, Any], *, replace: bool = False) -> Outcome:
        entity_name = tool.operation.entity or ""
        entity = self.spec.entities[entity_name]
        outcome = Outcome(entity_name)
        for record in self.records(tool, args):
            key = key_of(entity, record)
            if key is None:
                raise WorldError(f"{tool.name}: a record needs {', '.join(entity.key)}")
            if store.get(entity_name, key) is not None and not replace:
                continue  # already there: left as it is, as the reference servers do
            store.put(entity_name, record, key)
            outcome.rows.append(record)
        return outcome

    def _upsert(self, tool: TwinTool, store: Store, args: dict[str, Any]) -> Outcome:
        return self._create(tool, store, args, replace=True)

    def _read(self, tool: TwinTool, store: Store, args: dict[str, Any]) -> Outcome:
        entity = tool.operation.entity or ""
        keys, single = self.keys(tool, args)
        outcome = Outcome(entity)
        for key in keys:
            row = store.get(entity, key)
            if row is None and single:
                raise self.not_found(tool, entity, key, args)
            if row is not None:
                outcome.rows.append(row)
        self._relate(store, outcome, limit_to_rows=True)
        return outcome

    def _list(self, tool: TwinTool, store: Store, args: dict[str, Any]) -> Outcome:
        entity = tool.operation.entity or ""
        outcome = Outcome(entity, rows=store.rows(entity))
        query = args.get(tool.operation.query or "")
        if isinstance(query, str) and query:
            outcome.rows = [r for r in outcome.rows if _matches(r, query)]
        self._relate(store, outcome, limit_to_rows=bool(query))
        return outcome

    def _relate(self, store: Store, outcome: Outcome, *, limit_to_rows: bool) -> None:
        """Other entities' rows shown beside the result: all of them, or (for a search or a
        lookup) those that refer to one of the result's rows."""
        if outcome.entity is None:
            return
        primary = self.spec.entities[outcome.entity]
        inside = {key_of(primary, r) for r in outcome.rows}
        for name in self.spec.entities:
            if name != outcome.entity:
                rows = store.rows(name)
                outcome.related[name] = [r for r in rows if _refers_to(r, inside)] if limit_to_rows else rows

    def _update(self, tool: TwinTool, store: Store, args: dict[str, Any]) -> Outcome:
        entity_name = tool.operation.entity or ""
        keys, _ = self.keys(tool, args)
        if not keys:
            raise WorldError(f"{tool.name}: name the record to change")
        row = store.get(entity_name, keys[0])
        if row is None:
            raise self.not_found(tool, entity_name, keys[0], args)
        entity = self.spec.entities[entity_name]
        row |= {k: v for k, v in args.items() if k in entity.properties and k not in entity.key and v is not None}
        _apply_edits(row, entity, args)
        store.put(entity_name, row, keys[0])
        return Outcome(entity_name, rows=[row])

    def _delete(self, tool: TwinTool, store: Store, args: dict[str, Any]) -> Outcome:
        entity_name = tool.operation.entity or ""
        entity = self.spec.entities[entity_name]
        keys, single = self.keys(tool, args)
        if tool.operation.items:
            keys = [k for k in (key_of(entity, r) for r in self.records(tool, args)) if k is not None]
        outcome = Outcome(entity_name)
        for key in keys:
            row = store.get(entity_name, key)
            if row is None:
                if single:
                    raise self.not_found(tool, entity_name, key, args)
                continue
            store.remove(entity_name, key)
            outcome.rows.append(row)
        self._cascade(store, entity_name, {key_of(entity, r) for r in outcome.rows})
        return outcome

    def _cascade(self, store: Store, entity_name: str, keys: set[str | None]) -> None:
        """Records of other entities that refer to deleted ones go with them (a relation whose
        end was deleted)."""
        for name, other in self.spec.entities.items():
            if name != entity_name and keys:
                for row in store.rows(name):
                    if _refers_to(row, keys) and (key := key_of(other, row)) is not None:
                        store.remove(name, key)

    def _rename(self, tool: TwinTool, store: Store, args: dict[str, Any]) -> Outcome:
        op = tool.operation
        entity_name = op.entity or ""
        entity = self.spec.entities[entity_name]
        old, new = str(args[op.keys or ""]), str(args[op.target or ""])
        row = store.get(entity_name, old)
        if row is None:
            raise self.not_found(tool, entity_name, old, args)
        if store.get(entity_name, new) is not None:
            raise WorldError(f"{entity_name.replace('_', ' ').capitalize()} {new} already exists")
        store.remove(entity_name, old)
        row[entity.key[0]] = new
        store.put(entity_name, row, new)
        return Outcome(entity_name, rows=[row])

    def _items(self, tool: TwinTool, store: Store, args: dict[str, Any], *, add: bool) -> Outcome:
        op = tool.operation
        entity_name = op.entity or ""
        outcome = Outcome(entity_name)
        for item in args.get(op.items or "") or []:
            key = str(item.get(op.ref or ""))
            row = store.get(entity_name, key)
            if row is None:
                if add:
                    raise self.not_found(tool, entity_name, key, args)
                continue
            current = list(row.get(op.field or "") or [])
            given = list(item.get(op.values or "") or [])
            changed = [v for v in given if (v not in current) == add]
            row[op.field or ""] = current + changed if add else [v for v in current if v not in given]
            store.put(entity_name, row, key)
            outcome.rows.append(row)
            outcome.items.append({op.ref or "": key, "__values": changed})
        return outcome

    def _append(self, tool: TwinTool, store: Store, args: dict[str, Any]) -> Outcome:
        return self._items(tool, store, args, add=True)

    def _remove_items(self, tool: TwinTool, store: Store, args: dict[str, Any]) -> Outcome:
        return self._items(tool, store, args, add=False)

    def _call(self, tool: TwinTool, store: Store, args: dict[str, Any]) -> Outcome | Replayed:
        """A recorded answer to the same arguments (the n-th call gets the n-th answer, the last
        one repeats), else the tool's most common recorded answer, else a plain answer."""
        answers = self.spec.answers.get(tool.name, [])
        same = [a for a in answers if a.arguments == args]
        if same:
            answer = same[min(store.used(f"{tool.name}:{_canonical(args)}"), len(same) - 1)]
        elif answers:
            answer = answers[0]
        else:
            return Outcome(None)
        if answer.is_error:
            raise WorldError(answer.text)
        if tool.output_schema is not None and isinstance(answer.structured, dict):
            return Replayed(answer.structured)
        return Replayed(answer.text)


def _canonical(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True)


def texts_in(value: Any) -> list[str]:
    """Every string inside a JSON value, in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in texts_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in texts_in(v)]
    return []


def _matches(row: dict[str, Any], query: str) -> bool:
    wanted = query.lower()
    return any(wanted in text.lower() for text in texts_in(row))


def _edit_pair(item: dict[str, Any]) -> tuple[str, str] | None:
    """(old, new) from an edit such as {oldText, newText} or {old_string, new_string}."""
    old = [v for k, v in item.items() if words(k)[:1] == ["old"] and isinstance(v, str)]
    new = [v for k, v in item.items() if words(k)[:1] == ["new"] and isinstance(v, str)]
    return (old[0], new[0]) if len(old) == 1 and len(new) == 1 else None


def _apply_edits(row: dict[str, Any], entity: TwinEntity, args: dict[str, Any]) -> None:
    """Text replacements given as a list of old/new pairs, applied to the record's one text
    field (its content); an old text that is not there is refused."""
    texts = [k for k, v in row.items() if k not in entity.key and isinstance(v, str)]
    for value in args.values():
        pairs = (
            [p for item in value if isinstance(item, dict) and (p := _edit_pair(item))]
            if isinstance(value, list)
            else []
        )
        if not pairs or len(texts) != 1:
            continue
        for old, new in pairs:
            if old not in row[texts[0]]:
                raise WorldError(f"Could not find the text to replace: {old}")
            row[texts[0]] = row[texts[0]].replace(old, new, 1)


def _refers_to(row: dict[str, Any], keys: set[str | None]) -> bool:
    return any(isinstance(v, str) and v in keys for v in row.values())
