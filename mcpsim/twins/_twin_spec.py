"""The twin spec (`TwinSpec`, JSON): a simulated twin of a real MCP server, whose tools have the same
names and input schemas as the real ones, backed by tables and seeded data. `mcpsim.twins._infer`
writes one from a server's tools; `mcpsim.twins._world` compiles one into a `World`;
`mcpsim.twins.recordings._stdio` records a real server's traffic, seeds a twin from it and measures the
twin's fidelity.

Each tool's `operation` names its kind (create, upsert, read, list, update, append, remove_items,
delete, rename, or `call` for a tool whose effect cannot be read from its name and schema: its
answers are replayed from recordings)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mcpsim.twins._limits import MAX_TWIN_BYTES

OperationKind = Literal[
    "create", "upsert", "read", "list", "update", "append", "remove_items", "delete", "rename", "call"
]
WRITES = frozenset({"create", "upsert", "update", "append", "remove_items", "delete", "rename"})


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


def _read_bounded(path: Path) -> bytes:
    """The file's bytes, read no further than `MAX_TWIN_BYTES` (a ValueError past it)."""
    with path.open("rb") as handle:
        raw = handle.read(MAX_TWIN_BYTES + 1)
    if len(raw) > MAX_TWIN_BYTES:
        raise ValueError(f"{path}: a twin spec is at most {MAX_TWIN_BYTES:,} bytes (MAX_TWIN_BYTES); this is longer")
    return raw


def load_twin(path: str | Path) -> TwinSpec:
    """A twin spec from its file, read within `MAX_TWIN_BYTES`. A file past it, or one that is not
    a twin spec, is a ValueError naming the file and the first problem."""
    path = Path(path)
    try:
        return TwinSpec.model_validate_json(_read_bounded(path))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the file"
        raise ValueError(f"{path}: not a twin spec ({exc.error_count()} problems; {where}: {first['msg']})") from None
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror or exc}") from None


def is_twin_file(path: str | Path) -> bool:
    """Whether a spec file holds a twin (`"kind": "twin"`) rather than a world spec (a file past
    `MAX_TWIN_BYTES` is not read further: the world spec's own bound then refuses it)."""
    try:
        data = json.loads(_read_bounded(Path(path)))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("kind") == "twin"
