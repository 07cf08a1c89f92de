"""A twin spec compiled into a `World`: one table per entity (the record as JSON under its key),
one tool per real tool with the real input schema taken verbatim (and checked with `jsonschema`),
bodies that carry out the inferred operation on the tables, and answers built from the real
output schema (checked against it before they leave the tool)."""

from __future__ import annotations

import inspect
import json
import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic_core import core_schema
from sqlalchemy import JSON, Column, Integer, MetaData, String, Table, delete, func, insert, select, update

from mcpsim.twins._infer import (
    TwinEntity,
    TwinSpec,
    TwinTool,
    inline_refs,
    is_text,
    is_text_list,
    words,
)
from mcpsim.world import SeedContext, ToolContext, World, WorldError

ANSWERS_TABLE = "twin_answers"  # how many times each recorded answer was replayed (episode state)
EPOCH = datetime.fromisoformat("2026-05-15T09:00:00+00:00")


class Verbatim:
    """An argument whose JSON Schema is exactly `schema`: published as is (no title or default
    added) and checked with `jsonschema`. A missing optional argument arrives as None."""

    def __init__(self, schema: dict[str, Any], ref: str) -> None:
        self.schema = schema
        self.ref = ref
        self.validator = _validator(schema)

    def _check(self, value: Any) -> Any:
        if value is None:
            return value
        error = jsonschema.exceptions.best_match(self.validator.iter_errors(value))
        if error is not None:
            where = "/".join(map(str, error.absolute_path))
            raise ValueError(f"{where + ': ' if where else ''}{error.message}")
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        # a schema with a ref gets no title from pydantic; the JSON Schema below replaces it whole
        return core_schema.no_info_after_validator_function(self._check, core_schema.any_schema(), ref=self.ref)

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> dict[str, Any]:
        return dict(self.schema)


def _validator(schema: dict[str, Any]) -> Any:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def verbatim_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A model whose JSON Schema is exactly `schema` (an output schema), accepting any object."""

    def replace(published: dict[str, Any]) -> None:
        published.clear()
        published.update({k: v for k, v in schema.items() if k != "$schema"})

    model: type[BaseModel] = create_model(name, __config__=ConfigDict(extra="allow", json_schema_extra=replace))
    return model


# -- storage ----------------------------------------------------------------------------------


def _table_name(entity: str) -> str:
    return f"{entity}_records"


def build_tables(spec: TwinSpec) -> tuple[MetaData, dict[str, Table]]:
    metadata = MetaData()
    tables = {
        entity: Table(
            _table_name(entity),
            metadata,
            Column("id", String, primary_key=True),
            Column("pos", Integer, nullable=False, index=True),
            Column("data", JSON, nullable=False),
        )
        for entity in spec.entities
    }
    Table(ANSWERS_TABLE, metadata, Column("id", String, primary_key=True), Column("used", Integer, nullable=False))
    return metadata, tables


def key_of(entity: TwinEntity, record: dict[str, Any]) -> str | None:
    values = [record.get(k) for k in entity.key]
    if any(v is None for v in values):
        return None
    return str(values[0]) if len(values) == 1 else json.dumps(values)


@dataclass
class Store:
    """The entity tables of one call's transaction."""

    ctx: ToolContext
    spec: TwinSpec
    tables: dict[str, Table]

    def rows(self, entity: str) -> list[dict[str, Any]]:
        table = self.tables[entity]
        return [dict(r) for r in self.ctx.session.execute(select(table.c.data).order_by(table.c.pos)).scalars()]

    def get(self, entity: str, key: str) -> dict[str, Any] | None:
        table = self.tables[entity]
        found = self.ctx.session.execute(select(table.c.data).where(table.c.id == key)).scalar()
        return dict(found) if found is not None else None

    def put(self, entity: str, record: dict[str, Any], key: str) -> None:
        table = self.tables[entity]
        if self.get(entity, key) is not None:
            self.ctx.session.execute(update(table).where(table.c.id == key).values(data=record))
            return
        last = self.ctx.session.execute(select(func.max(table.c.pos))).scalar()
        self.ctx.session.execute(insert(table).values(id=key, pos=(last or 0) + 1, data=record))

    def remove(self, entity: str, key: str) -> None:
        table = self.tables[entity]
        self.ctx.session.execute(delete(table).where(table.c.id == key))

    def used(self, answer_id: str) -> int:
        """How many times this answer was given before; counts this time."""
        table = self.tables[ANSWERS_TABLE]
        before = self.ctx.session.execute(select(table.c.used).where(table.c.id == answer_id)).scalar()
        if before is None:
            self.ctx.session.execute(insert(table).values(id=answer_id, used=1))
            return 0
        self.ctx.session.execute(update(table).where(table.c.id == answer_id).values(used=before + 1))
        return int(before)


# -- what a call did, and its answer -----------------------------------------------------------


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
        error = jsonschema.exceptions.best_match(_validator(schema).iter_errors(built))
        if error is not None:  # a simulator bug: the twin must answer in the real schema
            raise RuntimeError(f"twin answer of {self.tool.name} breaks its output schema: {error.message}")
        return built


# -- operations -------------------------------------------------------------------------------


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


# -- seed data --------------------------------------------------------------------------------


def _synthetic(
    spec: TwinSpec, entity_name: str, n: int, ctx: SeedContext, keys: dict[str, list[str]]
) -> dict[str, Any]:
    entity = spec.entities[entity_name]
    record: dict[str, Any] = {}
    for name, schema in entity.properties.items():
        schema = first_option(schema)
        last = (words(name) or ["value"])[-1]
        others = [k for e, ks in keys.items() if e != entity_name for k in ks]
        if name in entity.key and len(entity.key) == 1:
            record[name] = f"/twin/{entity_name}{n}.txt" if last == "path" else f"{entity_name}-{n}"
        elif is_text(schema) and last in ("from", "to", "source", "target") and others:
            record[name] = ctx.rng.choice(others)
        elif "enum" in schema:
            record[name] = ctx.rng.choice(schema["enum"])
        elif is_text(schema):
            record[name] = ctx.faker.paragraph() if last in ("content", "text", "body") else ctx.faker.word()
        elif is_text_list(schema):
            record[name] = [ctx.faker.sentence() for _ in range(2)]
        elif schema.get("type") == "integer":
            record[name] = ctx.rng.randint(0, 100)
        elif schema.get("type") == "number":
            record[name] = round(ctx.rng.uniform(0, 100), 2)
        elif schema.get("type") == "boolean":
            record[name] = ctx.rng.random() < 0.5
        elif schema.get("type") == "array":
            record[name] = []
    return record


def seed_twin(spec: TwinSpec, tables: dict[str, Table], ctx: SeedContext) -> None:
    keys: dict[str, list[str]] = {}
    order = sorted(spec.entities, key=lambda e: len(spec.entities[e].key))  # single keys first: others refer to them
    for entity_name in order:
        entity = spec.entities[entity_name]
        records = [dict(r) for r in spec.seed_rows.get(entity_name, [])]
        records += [_synthetic(spec, entity_name, n, ctx, keys) for n in range(1, spec.synthetic_rows + 1)]
        rows: dict[str, dict[str, Any]] = {}
        for record in records:
            key = key_of(entity, record)
            if key is not None and key not in rows:
                rows[key] = {"id": key, "pos": len(rows) + 1, "data": record}
        ctx.insert(tables[entity_name], rows.values())
        keys[entity_name] = list(rows)


# -- the world --------------------------------------------------------------------------------


def python_names(names: list[str]) -> dict[str, str]:
    """A Python parameter name for each argument name (`from` -> `from_`, `repo-path` ->
    `repo_path_`); the argument keeps its real name as the parameter's alias."""
    found: dict[str, str] = {}
    for name in names:
        usable = name.isidentifier() and not keyword.iskeyword(name) and name != "ctx"
        candidate = name if usable else re.sub(r"\W|^(?=\d)", "_", name) + "_"
        while candidate in found.values() or (candidate != name and candidate in names):
            candidate += "_"
        found[name] = candidate
    return found


def _parameters(tool: TwinTool, names: dict[str, str]) -> list[inspect.Parameter]:
    schema = inline_refs(tool.input_schema)  # the SDK writes the top level: no shared $defs
    required = set(schema.get("required") or [])
    params = []
    for n, (name, prop) in enumerate((schema.get("properties") or {}).items()):
        field: dict[str, Any] = {} if name in required else {"default_factory": lambda: None}
        if names[name] != name:
            field["alias"] = name
        annotation: Any = Annotated[Any, Verbatim(prop, f"{tool.name}.{n}"), Field(**field)]
        params.append(inspect.Parameter(names[name], inspect.Parameter.KEYWORD_ONLY, annotation=annotation))
    return params


def _body(runner: TwinTools, tool: TwinTool) -> Callable[..., Any]:
    defaults = {k: v["default"] for k, v in (tool.input_schema.get("properties") or {}).items() if "default" in v}
    output = verbatim_model(f"{tool.name}_output", inline_refs(tool.output_schema)) if tool.output_schema else None

    names = python_names(list(tool.input_schema.get("properties") or {}))
    real = {python: name for name, python in names.items()}

    def body(ctx: ToolContext, **arguments: Any) -> Any:
        args = defaults | {real.get(k, k): v for k, v in arguments.items() if v is not None}
        answer = runner.run(tool, ctx, args)
        return output.model_validate(answer) if output is not None and isinstance(answer, dict) else answer

    params = _parameters(tool, names)
    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=ToolContext)
    returns: Any = output if output is not None else inspect.Signature.empty
    body.__signature__ = inspect.Signature([context, *params], return_annotation=returns)  # type: ignore[attr-defined]
    body.__annotations__ = {"ctx": ToolContext} | {p.name: p.annotation for p in params}
    if output is not None:
        body.__annotations__["return"] = output
    body.__name__ = body.__qualname__ = re.sub(r"\W", "_", tool.name)
    body.__doc__ = tool.description or tool.title or tool.name
    return body


def compile_twin(spec: TwinSpec) -> World:
    metadata, tables = build_tables(spec)
    policy = f"# {spec.title}\n\n{spec.description}\n"
    world = World(
        spec.name,
        title=spec.title,
        description=spec.description,
        metadata=metadata,
        policy=policy,
        scales={"default": {}, "small": {}},
        epoch=EPOCH,
        revision=f"twin-{spec.digest()}",
    )
    runner = TwinTools(spec, {**tables, ANSWERS_TABLE: metadata.tables[ANSWERS_TABLE]})
    for tool in spec.tools:
        world.tool(
            name=tool.name,
            title=tool.title,
            read_only=tool.read_only,
            destructive=tool.destructive and not tool.read_only,
            idempotent=tool.idempotent,
        )(_body(runner, tool))
    world.seeder(lambda ctx: seed_twin(spec, tables, ctx))
    return world


# -- checking a twin against the real server's surface -----------------------------------------


def sample_arguments(spec: TwinSpec, tool: TwinTool, existing: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Arguments that satisfy the tool's input schema, naming existing records where the tool
    reads, changes or deletes one, and new ones where it creates."""
    op = tool.operation
    entity = spec.entities.get(op.entity or "")
    rows = existing.get(op.entity or "", [])
    known = [key_of(entity, r) for r in rows] if entity is not None else []
    creating = op.kind in ("create", "upsert")

    def text(name: str) -> str:
        if name in (op.keys, op.ref) and known and known[0] is not None:
            return known[0]
        if words(name)[:1] == ["old"] and rows and entity is not None:  # an edit names text that is there
            texts = [v for k, v in rows[0].items() if k not in entity.key and isinstance(v, str) and v]
            return texts[0][:4] if texts else "sample"
        if entity is not None and name in entity.key and creating:
            return f"/twin/new-{name}.txt" if words(name)[-1:] == ["path"] else f"new-{name}"
        if name == op.target:
            return "/twin/renamed.txt"
        return "sample"

    def value(name: str, schema: dict[str, Any]) -> Any:
        schema = first_option(schema)
        if "default" in schema:
            return schema["default"]
        if "enum" in schema:
            return schema["enum"][0]
        kind = schema.get("type")
        if kind == "object":
            props = schema.get("properties") or {}
            return {k: value(k, v) for k, v in props.items() if k in (schema.get("required") or props)}
        if kind == "array":
            items = schema.get("items") if isinstance(schema.get("items"), dict) else {"type": "string"}
            assert isinstance(items, dict)
            props = set(items.get("properties") or {})
            if name == op.items and entity is not None and not creating and rows and props <= set(entity.properties):
                return [{k: v for k, v in rows[0].items() if k in props}]
            return [value(name, items)]
        if kind in ("integer", "number"):
            return max(1, int(schema.get("minimum", 1)))
        if kind == "boolean":
            return False
        return text(name)

    schema = inline_refs(tool.input_schema)  # pydantic parameters (`notes: list[Note]`) arrive as $defs and $ref
    return value(
        "", {"type": "object", **{k: v for k, v in schema.items() if k not in ("$schema", "$defs", "definitions")}}
    )


async def check_twin(spec: TwinSpec, real_tools: list[dict[str, Any]], *, seed: int = 0) -> dict[str, Any]:
    """Serve the twin in memory to the SDK's client and compare it with the real server's tools:
    every tool present, its input schema equal, and its answer to sample arguments valid against
    the real output schema (a fresh episode per tool)."""
    from mcp import Client

    from mcpsim.engine import Episode, TemplateCache
    from mcpsim.serve import build_server
    from mcpsim.twins._infer import schema_equal

    spec = spec.model_copy(update={"synthetic_rows": max(spec.synthetic_rows, 3)})  # records to name
    world = compile_twin(spec)
    templates = TemplateCache(None)
    episode = Episode.create(world, seed, "default", templates=templates)
    existing = {
        name: [json.loads(r["data"]) for r in episode.query(f'SELECT data FROM "{_table_name(name)}" ORDER BY pos')]
        for name in spec.entities
    }
    real = {t["name"]: t for t in real_tools}
    answers: dict[str, dict[str, Any]] = {}
    async with Client(build_server(world, lambda _id: episode)) as client:
        published = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        for tool in spec.tools:
            episode.close()
            episode = Episode.create(world, seed, "default", templates=templates)
            args = sample_arguments(spec, tool, existing)
            result = await client.call_tool(tool.name, args)
            problem = None
            output = real.get(tool.name, {}).get("outputSchema")
            if output is not None and not result.is_error:
                found = jsonschema.exceptions.best_match(_validator(output).iter_errors(result.structured_content))
                problem = found.message if found is not None else None
            text = "\n".join(getattr(c, "text", "") for c in result.content)
            answers[tool.name] = {"arguments": args, "is_error": result.is_error, "schema_problem": problem}
            if result.is_error:
                answers[tool.name]["error"] = text
    episode.close()
    equal = [n for n in real if n in published and schema_equal(real[n].get("inputSchema") or {}, published[n])]
    return {
        "tools": len(real),
        "mirrored": sum(1 for n in real if n in published),
        "schemas_equal": len(equal),
        "schema_differs": sorted(n for n in real if n in published and n not in equal),
        "missing": sorted(n for n in real if n not in published),
        "answers_ok": sum(1 for a in answers.values() if not a["is_error"] and a["schema_problem"] is None),
        "answers": answers,
        "operations": {t.name: t.operation.kind for t in spec.tools},
        "entities": {name: e.key for name, e in spec.entities.items()},
    }
