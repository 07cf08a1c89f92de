"""Simulated twins of real MCP servers: infer a server's entities and operations from its tools'
names and schemas (as `mcpsim.twins._surface` reads them), and write a twin spec
(`mcpsim.twins._twin_spec`) whose tools have the same names and input schemas as the real ones.

The inference is heuristic and says what it guessed: each tool's `operation` names its kind
(create, upsert, read, list, update, append, remove_items, delete, rename, or `call` for a tool
whose effect cannot be read from its name and schema: its answers are replayed from recordings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpsim.twins._names import common_prefix, inflect_engine, singular, words, world_name
from mcpsim.twins._schemas import inline_refs, is_text, is_text_list, object_items, properties_of
from mcpsim.twins._surface import ServerSurface
from mcpsim.twins._twin_spec import WRITES, Operation, OperationKind, TwinEntity, TwinSpec, TwinTool

# The first word of a tool's name (after a prefix all tools share) -> the operation it suggests.
VERBS: dict[str, OperationKind] = {
    **dict.fromkeys(["create", "add", "new", "insert", "make", "post", "register", "init"], "create"),
    **dict.fromkeys(["write", "put", "set", "save", "store", "upload", "upsert"], "upsert"),
    **dict.fromkeys(["get", "read", "open", "show", "view", "fetch", "describe", "retrieve", "info"], "read"),
    **dict.fromkeys(["list", "search", "find", "query", "browse", "lookup", "tree", "directory"], "list"),
    **dict.fromkeys(["update", "edit", "modify", "patch", "change", "replace"], "update"),
    **dict.fromkeys(["move", "rename", "mv"], "rename"),
    **dict.fromkeys(["delete", "remove", "rm", "drop", "destroy", "erase"], "delete"),
}
KEY_NAMES = ("name", "id", "key", "path", "uri", "url", "slug", "title")


def choose_key(properties: dict[str, Any], required: list[str]) -> list[str]:
    """The properties that identify a record: a name-like one, else every required text one."""
    texts = [p for p in properties if is_text(properties[p])]
    for wanted in KEY_NAMES:
        for p in texts:
            if words(p)[-1:] == [wanted]:
                return [p]
    required_texts = [p for p in required if p in texts]
    return required_texts or texts[:1] or list(properties)[:1]


@dataclass
class _Tool:
    raw: dict[str, Any]
    verb: str
    noun: str  # singular, words joined by "_"
    kind: OperationKind

    @property
    def name(self) -> str:
        return str(self.raw["name"])

    @property
    def inputs(self) -> dict[str, Any]:
        return properties_of(self.raw.get("inputSchema"))

    @property
    def required(self) -> list[str]:
        return list((self.raw.get("inputSchema") or {}).get("required") or [])


def _classify(raw: dict[str, Any], prefix: list[str]) -> _Tool:
    parts = words(raw["name"])[len(prefix) :] or words(raw["name"])
    verb = parts[0]
    kind = VERBS.get(verb)
    rest = parts[1:] if kind is not None else parts
    if kind is None:
        hints = raw.get("annotations") or {}
        kind = "list" if len(parts) == 1 and hints.get("readOnlyHint") else "call"  # git_branch: the branches
    noun = "_".join([*rest[:-1], singular(rest[-1])]) if rest else ""
    return _Tool(raw, verb, noun, kind)


def _key_argument(tool: _Tool, entity: TwinEntity) -> str | None:
    """The argument holding a key (or a list of keys) of `entity`: `names`, `entityNames`, `path`."""
    keyword = words(entity.key[0])[-1] if len(entity.key) == 1 else None
    if keyword is None:
        return None
    for name, schema in tool.inputs.items():
        last = singular(words(name)[-1]) if words(name) else ""
        if last == keyword and (is_text(schema) or is_text_list(schema)):
            return name
    return None


def _entity_for(tool: _Tool, entities: dict[str, TwinEntity]) -> str | None:
    if tool.noun in entities:
        return tool.noun
    for name in entities:
        if tool.noun and (tool.noun.endswith(f"_{name}") or name.endswith(f"_{tool.noun}")):
            return name
    shapes = {frozenset(e.properties): n for n, e in entities.items()}
    for schema in tool.inputs.values():
        items = object_items(schema)
        if items is not None and frozenset(items["properties"]) in shapes:
            return shapes[frozenset(items["properties"])]
    return None


def _entity_in_output(tool: _Tool, entities: dict[str, TwinEntity]) -> str | None:
    """The first entity whose records the tool's output lists (read_graph, search_nodes)."""
    for schema in properties_of(tool.raw.get("outputSchema")).values():
        items = object_items(schema)
        for name, e in entities.items():
            if items is not None and set(e.key) <= set(items["properties"]) <= set(e.properties):
                return name
    return None


def _discover_entities(tools: list[_Tool]) -> dict[str, TwinEntity]:
    """Entities from what create and upsert tools take: a list of records, or the tool's own
    arguments (write_file's path and content)."""
    entities: dict[str, TwinEntity] = {}
    for t in tools:
        if t.kind not in ("create", "upsert") or not t.noun or _list_field(t, entities) is not None:
            continue
        for arg, schema in t.inputs.items():
            items = object_items(schema)
            if items is not None and singular(words(arg)[-1]) == t.noun.split("_")[-1]:
                required = list(items.get("required") or [])
                entities.setdefault(
                    t.noun,
                    TwinEntity(
                        key=choose_key(items["properties"], required),
                        properties=items["properties"],
                        required=required,
                        source=f"{t.name}.{arg}",
                    ),
                )
                break
        else:
            scalars = {k: v for k, v in t.inputs.items() if object_items(v) is None}
            if scalars and t.noun not in entities:
                required = [r for r in t.required if r in scalars]
                entities[t.noun] = TwinEntity(
                    key=choose_key(scalars, required),
                    properties=scalars,
                    required=required,
                    source=f"{t.name}.arguments",
                )
    return entities


def _list_field(tool: _Tool, entities: dict[str, TwinEntity]) -> tuple[str, str] | None:
    """(entity, field) when the tool's noun is a list field of an entity (add_observations)."""
    plural = inflect_engine().plural_noun(tool.noun.split("_")[-1]) if tool.noun else ""
    for name, e in entities.items():
        for prop, schema in e.properties.items():
            if prop in (plural, tool.noun) and schema.get("type") == "array":
                return name, prop
    return None


def _operation(tool: _Tool, entities: dict[str, TwinEntity]) -> Operation:
    kind = tool.kind
    if kind in ("create", "update", "delete") and (found := _list_field(tool, entities)) is not None:
        owner, list_field = found
        return _list_operation(tool, entities[owner], owner, list_field, kind) or Operation(kind="call")
    entity = _entity_for(tool, entities)
    if entity is None and kind in ("read", "list"):
        entity = _entity_in_output(tool, entities)
    if entity is None or kind == "call":
        return Operation(kind="call")
    e = entities[entity]
    items = next((a for a, s in tool.inputs.items() if object_items(s) is not None), None)
    item_shape = frozenset(properties_of(object_items(tool.inputs[items]))) if items else frozenset()
    items = items if items and item_shape and item_shape <= frozenset(e.properties) else None
    keys = _key_argument(tool, e)
    if kind in ("create", "upsert"):
        return Operation(kind=kind, entity=entity, items=items)
    if kind == "rename":
        texts = [a for a, s in tool.inputs.items() if is_text(s)]
        if len(texts) >= 2:
            return Operation(kind="rename", entity=entity, keys=texts[0], target=texts[1])
        return Operation(kind="call")
    if kind == "list":
        query = next((a for a in ("query", "pattern", "q", "search", "filter") if a in tool.inputs), None)
        return Operation(kind="list", entity=entity, query=query)
    if kind in ("read", "delete", "update"):
        if keys is None and items is None:
            return Operation(kind="call") if kind != "read" else Operation(kind="list", entity=entity)
        return Operation(kind=kind, entity=entity, keys=keys, items=items)
    return Operation(kind="call")


def _list_operation(tool: _Tool, e: TwinEntity, entity: str, list_field: str, kind: str) -> Operation | None:
    for arg, schema in tool.inputs.items():
        items = object_items(schema)
        if items is None:
            continue
        props = items["properties"]
        ref = next((p for p in props if is_text(props[p]) and words(p)[-1:] == words(e.key[0])[-1:]), None)
        values = next((p for p in props if is_text_list(props[p])), None)
        if ref and values:
            op_kind: OperationKind = "append" if kind == "create" else "remove_items"
            return Operation(kind=op_kind, entity=entity, items=arg, field=list_field, ref=ref, values=values)
    return None


def _inlined(raw: dict[str, Any]) -> dict[str, Any]:
    """A tool with its schemas' references resolved, for the inference to read."""
    schemas = {k: inline_refs(raw[k]) for k in ("inputSchema", "outputSchema") if isinstance(raw.get(k), dict)}
    return raw | schemas


def infer_twin(surface: ServerSurface) -> TwinSpec:
    """A twin spec from what a server shows: every tool, with its schemas verbatim, and an
    operation inferred from its name and schemas."""
    prefix = common_prefix([t["name"] for t in surface.tools])
    tools = [_classify(_inlined(raw), prefix) for raw in surface.tools]
    entities = _discover_entities(tools)
    twin_tools: list[TwinTool] = []
    for raw, t in zip(surface.tools, tools, strict=True):
        hints = t.raw.get("annotations") or {}
        operation = _operation(t, entities)
        read_only = hints.get("readOnlyHint", operation.kind in ("read", "list"))
        if operation.kind in WRITES and read_only:  # the server says it only reads: trust it
            operation = Operation(kind="call")
        twin_tools.append(
            TwinTool(
                name=t.name,
                title=t.raw.get("title"),
                description=t.raw.get("description") or "",
                input_schema=raw.get("inputSchema") or {"type": "object", "properties": {}},
                output_schema=raw.get("outputSchema"),
                read_only=bool(read_only),
                destructive=bool(hints.get("destructiveHint", operation.kind in ("delete", "rename")))
                and not read_only,
                idempotent=bool(hints.get("idempotentHint", read_only)),
                operation=operation,
            )
        )
    description = surface.instructions or f"A simulated twin of the MCP server {surface.name} {surface.version}."
    return TwinSpec(
        name=world_name(surface.name),
        title=f"{surface.name} (twin)",
        description=description,
        server={
            "name": surface.name,
            "version": surface.version,
            "source": surface.source,
            "resources": surface.resources,
        },
        entities=entities,
        tools=twin_tools,
    )
