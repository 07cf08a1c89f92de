"""Simulated twins of real MCP servers: read a server's tools and resources, infer its entities and
operations from the tools' names and schemas, and write a twin spec (`TwinSpec`, JSON) whose tools
have the same names and input schemas as the real ones, backed by tables and seeded data.
`mcpsim.twins._world` compiles a twin spec into a `World`; `mcpsim.recordings._stdio` records a
real server's traffic, seeds a twin from it and measures the twin's fidelity.

The inference is heuristic and says what it guessed: each tool's `operation` names its kind
(create, upsert, read, list, update, append, remove_items, delete, rename, or `call` for a tool
whose effect cannot be read from its name and schema: its answers are replayed from recordings)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

OperationKind = Literal[
    "create", "upsert", "read", "list", "update", "append", "remove_items", "delete", "rename", "call"
]
WRITES = frozenset({"create", "upsert", "update", "append", "remove_items", "delete", "rename"})

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


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TwinEntity(_Model):
    """A kind of record the server keeps: the JSON Schema of its properties and the properties
    that identify one (several for a composite key, such as a relation's from, to and type)."""

    key: list[str] = Field(min_length=1)
    properties: dict[str, Any]
    required: list[str] = Field(default_factory=list)
    source: str = Field(description="where the shape was read: tool.argument or tool.output")


class Operation(_Model):
    """What a tool does in the twin: its kind, the entity it works on, and which arguments hold
    the records, keys, query or new key (names of the tool's own arguments)."""

    kind: OperationKind
    entity: str | None = None
    items: str | None = Field(default=None, description="the argument holding a list of records")
    keys: str | None = Field(default=None, description="the argument holding one key or a list of keys")
    field: str | None = Field(default=None, description="append/remove_items: the list field of the entity")
    ref: str | None = Field(default=None, description="append/remove_items: the item property naming the row")
    values: str | None = Field(default=None, description="append/remove_items: the item property with the values")
    query: str | None = Field(default=None, description="list: the text argument rows are matched against")
    target: str | None = Field(default=None, description="rename: the argument with the new key")


class RecordedAnswer(_Model):
    """One answer of the real server (from a recording), replayed by `call` tools."""

    arguments: dict[str, Any]
    is_error: bool = False
    text: str = ""
    structured: Any = None


class TwinTool(_Model):
    """One tool of the real server: its name, description and schemas verbatim, its hints, the
    operation the twin carries out, and the messages learned from recordings."""

    name: str
    title: str | None = None
    description: str = ""
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    operation: Operation
    ok_message: str | None = Field(default=None, description="a write's answer text, with {args.NAME} placeholders")
    not_found: str | None = Field(default=None, description="the error for a missing row, with {key} and {args.NAME}")
    errors: list[str] = Field(default_factory=list, description="error texts seen in recordings, as templates")


class TwinSpec(_Model):
    """A simulated twin of a real MCP server (`mcpsim gen --from-mcp`): its entities, its tools
    with the real names and schemas, the data every episode starts with, and what recordings
    taught it (answers to replay, a fault profile). Published as schemas/twin-spec.schema.json."""

    kind: Literal["twin"] = "twin"
    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")
    title: str
    description: str
    server: dict[str, Any] = Field(default_factory=dict, description="the real server: name, version, source")
    entities: dict[str, TwinEntity] = Field(default_factory=dict)
    tools: list[TwinTool]
    seed_rows: dict[str, list[dict[str, Any]]] = Field(
        default_factory=dict, description="rows every episode starts with (from recordings)"
    )
    synthetic_rows: int = Field(default=5, ge=0, le=1000, description="generated rows per entity besides seed_rows")
    answers: dict[str, list[RecordedAnswer]] = Field(default_factory=dict, description="call tools' recorded answers")
    faults: dict[str, Any] | None = Field(default=None, description="a fault profile of the error kinds recorded")

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()).hexdigest()[:16]

    def real_tools(self) -> list[dict[str, Any]]:
        """The real server's tools as it listed them (names and schemas), from the spec."""
        return [
            {"name": t.name, "inputSchema": t.input_schema}
            | ({"outputSchema": t.output_schema} if t.output_schema else {})
            for t in self.tools
        ]

    def tool(self, name: str) -> TwinTool:
        for t in self.tools:
            if t.name == name:
                return t
        raise KeyError(name)


def load_twin(path: str | Path) -> TwinSpec:
    return TwinSpec.model_validate_json(Path(path).read_text(encoding="utf-8"))


def is_twin_file(path: str | Path) -> bool:
    """Whether a spec file holds a twin (`"kind": "twin"`) rather than a world spec."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("kind") == "twin"


# -- reading a real server --------------------------------------------------------------------


@dataclass
class ServerSurface:
    """What a server shows a client: its name, version, instructions, tools and resources."""

    name: str
    version: str
    instructions: str
    tools: list[dict[str, Any]]  # as on the wire: name, title, description, inputSchema, outputSchema, annotations
    resources: list[dict[str, Any]] = field(default_factory=list)
    source: str = ""


def target_of(target: str | list[str], env: dict[str, str] | None = None) -> Any:
    """A URL, or a stdio command line (run with `env` added to the SDK's safe default
    environment), as the MCP SDK client's target."""
    from mcp import StdioServerParameters

    if isinstance(target, str):
        if not re.match(r"^https?://", target):
            raise ValueError(f"not an http(s) URL: {target!r}")
        return target
    if not target:
        raise ValueError("no command given: put the server's command line after --")
    return StdioServerParameters(command=target[0], args=list(target[1:]), env=env)


async def read_surface(
    target: str | list[str], *, env: dict[str, str] | None = None, limit_s: float = 60.0
) -> ServerSurface:
    """Connect to a real server (a URL or a stdio command line) and read its tools and resources."""
    import anyio
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    with anyio.fail_after(limit_s):
        async with Client(target_of(target, env), read_timeout_seconds=limit_s) as client:
            tools: list[dict[str, Any]] = []
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor)
                tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    break
            try:
                listed = await client.list_resources()
                resources = [r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in listed.resources]
            except MCPError:  # a server without resources answers "method not found"
                resources = []
            info = client.server_info
            instructions = client.instructions or ""
    source = target if isinstance(target, str) else " ".join(target)
    name, version = (info.name, info.version or "") if info is not None else ("server", "")
    return ServerSurface(name, version, instructions, tools, resources, source)


# -- names ------------------------------------------------------------------------------------


@cache
def _inflect() -> Any:
    import inflect

    return inflect.engine()


def singular(word: str) -> str:
    found = _inflect().singular_noun(word)
    return found if isinstance(found, str) and found else word


def words(name: str) -> list[str]:
    """`create_entities`, `createEntities`, `create-entities` -> ["create", "entities"]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def common_prefix(names: list[str]) -> list[str]:
    """The leading words every tool name shares (`git_` in git_status, git_log, ...)."""
    split = [words(n) for n in names]
    prefix: list[str] = []
    for group in zip(*split, strict=False):
        if len(set(group)) != 1 or any(len(s) <= len(prefix) + 1 for s in split):
            break
        prefix.append(group[0])
    return prefix if len(names) > 1 else []


def world_name(server: str) -> str:
    name = "_".join(words(server)) or "twin"
    name = name if name[0].isalpha() else f"twin_{name}"
    return name[:40]


# -- schemas ----------------------------------------------------------------------------------


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


def choose_key(properties: dict[str, Any], required: list[str]) -> list[str]:
    """The properties that identify a record: a name-like one, else every required text one."""
    texts = [p for p in properties if is_text(properties[p])]
    for wanted in KEY_NAMES:
        for p in texts:
            if words(p)[-1:] == [wanted]:
                return [p]
    required_texts = [p for p in required if p in texts]
    return required_texts or texts[:1] or list(properties)[:1]


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


# -- inference --------------------------------------------------------------------------------


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
    plural = _inflect().plural_noun(tool.noun.split("_")[-1]) if tool.noun else ""
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


# -- a model's view of the operations -----------------------------------------------------------


def operation_problem(spec: TwinSpec, tool: TwinTool, operation: Operation) -> str | None:
    """Why an operation cannot serve a tool (a name that does not exist), or None."""
    if operation.kind == "call":
        return None
    if tool.read_only and operation.kind in WRITES:
        return f"the server marks {tool.name} read-only; {operation.kind} writes"
    entity = spec.entities.get(operation.entity or "")
    if entity is None:
        return f"unknown entity {operation.entity!r} (entities: {sorted(spec.entities)})"
    arguments = properties_of(inline_refs(tool.input_schema))
    for role in ("items", "keys", "query", "target"):
        name = getattr(operation, role)
        if name is not None and name not in arguments:
            return f"{role}: {tool.name} has no argument {name!r}"
    if operation.kind in ("append", "remove_items"):
        items = object_items(arguments.get(operation.items or "", {}))
        if items is None or operation.field not in entity.properties:
            return f"{operation.kind} needs items (a list of records) and a list field of {operation.entity}"
        if operation.ref not in items["properties"] or operation.values not in items["properties"]:
            return f"ref and values must be properties of the {operation.items} records"
    if operation.kind in ("read", "update", "delete") and operation.keys is None and operation.items is None:
        return f"{operation.kind} names its records: keys or items"
    if operation.kind == "rename" and (operation.keys is None or operation.target is None):
        return "rename needs keys and target"
    return None


async def refine_with_model(
    spec: TwinSpec, client: Any, *, cache_dir: Path | None = None
) -> tuple[TwinSpec, dict[str, Any]]:
    """Ask a model (a `ChatClient`) to check each tool's operation; keep its answer where every
    name it gives exists, else the heuristic's. Returns the spec and what the model changed,
    confirmed and had refused (with the reason)."""
    from mcpsim.acceptance import ReplyCache, json_object, prompt, response_format
    from mcpsim.trajectories import Message

    schema = {
        "type": "object",
        "properties": {"operations": {"type": "object", "additionalProperties": Operation.model_json_schema()}},
        "required": ["operations"],
    }
    entities = "\n".join(f"- {n}: key {e.key}, properties {sorted(e.properties)}" for n, e in spec.entities.items())
    tools = "\n".join(
        json.dumps(
            {
                "name": t.name,
                "description": t.description,
                "input_schema": t.input_schema,
                "output_schema": t.output_schema,
                "proposed": t.operation.model_dump(exclude_none=True),
            }
        )
        for t in spec.tools
    )
    messages = [
        Message(role="system", content=prompt("twin_operations")),
        Message(role="user", content=prompt("twin_tools", entities=entities or "(none found)", tools=tools)),
    ]
    reply, _, cached = await ReplyCache(cache_dir).ask(client, messages, response_format("twin_operations", schema))
    try:
        proposed = json_object(reply).get("operations")
    except (ValueError, AttributeError):
        proposed = None
    report: dict[str, Any] = {"cached": cached, "changed": {}, "confirmed": [], "refused": {}}
    if not isinstance(proposed, dict):
        report["refused"]["*"] = "the answer holds no operations object"
        return spec, report
    tools_out = []
    for tool in spec.tools:
        raw = proposed.get(tool.name)
        if raw is None:
            tools_out.append(tool)
            continue
        try:
            operation = Operation.model_validate(raw)
        except ValueError as exc:
            report["refused"][tool.name] = str(exc).splitlines()[0]
            tools_out.append(tool)
            continue
        if (problem := operation_problem(spec, tool, operation)) is not None:
            report["refused"][tool.name] = problem
            tools_out.append(tool)
        elif operation == tool.operation:
            report["confirmed"].append(tool.name)
            tools_out.append(tool)
        else:
            report["changed"][tool.name] = operation.model_dump(exclude_none=True)
            tools_out.append(tool.model_copy(update={"operation": operation}))
    return spec.model_copy(update={"tools": tools_out}), report
