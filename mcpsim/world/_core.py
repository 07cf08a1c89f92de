"""The world API: what a simulated tool world declares. It knows nothing about MCP.

A world is one `World` object: its tables (a SQLModel registry of its own), its tools (typed
functions whose first parameter is a `ToolContext`), a seed function, a policy text and the
scales it can be built at. `mcpsim.serve._mcp` turns it into an MCP server; `mcpsim.engine._episode`
runs its tools against a private database.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import json
import random
import sqlite3
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache, cached_property
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, create_model
from sqlalchemy import MetaData
from sqlalchemy.dialects import sqlite
from sqlalchemy.schema import CreateIndex, CreateTable
from sqlmodel import Session

from mcpsim._yaml import load_trusted
from mcpsim.world import _seeding as seeding
from mcpsim.world._seeding import IdFormats, IdGenerator, SeedContext

T = TypeVar("T")


class WorldError(Exception):
    """A business error the agent should see ("order not found", "order already shipped").

    Raising it rolls the call back and returns the message to the agent as a tool error.
    Anything else raised inside a tool is a simulator bug.
    """


class PartialFailure(WorldError):
    """Raised by a tool that supports partial failures (`partial_failures=True`) when the fault
    injector asks for one (`ctx.fault == "partial"`): unlike a WorldError, the writes made so far
    are committed, a documented intermediate state (an order awaiting payment), and the message
    tells the agent what happened."""


class ToolContext:
    """What a tool receives besides its arguments: the call's transaction and deterministic
    sources. `now` is the episode's virtual time; `rng` is seeded per call. `fault` is
    "partial" when the tool should fail part-way (see PartialFailure), else None.

    The call's SQLAlchemy `session` and its `rng` are made the first time a tool asks for them
    (give either one ready made, or `open_session` and `seed`): most calls read with plain SQL
    (`mcpsim.world.sql`) and never draw a random number, and pay for neither."""

    __slots__ = ("now", "ids", "call_seq", "fault", "connection", "_session", "_open_session", "_rng", "_seed")

    def __init__(
        self,
        *,
        now: datetime,
        ids: IdGenerator,
        call_seq: int,
        session: Session | None = None,
        open_session: Callable[[], Session] | None = None,
        rng: random.Random | None = None,
        seed: int | None = None,
        fault: str | None = None,
        connection: sqlite3.Connection | None = None,
    ) -> None:
        if (session is None) == (open_session is None):
            raise TypeError("ToolContext needs exactly one of session and open_session")
        if (rng is None) == (seed is None):
            raise TypeError("ToolContext needs exactly one of rng and seed")
        self.now, self.ids, self.call_seq, self.fault = now, ids, call_seq, fault
        self.connection = connection  # the call's sqlite3 connection, in its transaction, if the engine gives it
        self._session, self._open_session = session, open_session
        self._rng, self._seed = rng, seed

    @property
    def session(self) -> Session:
        """The call's SQLAlchemy session, in the call's transaction (made on first use)."""
        if self._session is None:
            assert self._open_session is not None
            self._session = self._open_session()
        return self._session

    @property
    def opened_session(self) -> Session | None:
        """The call's session if a tool has asked for it, else None."""
        return self._session

    @property
    def rng(self) -> random.Random:
        """A random generator seeded for this call (made on first use)."""
        if self._rng is None:
            self._rng = random.Random(self._seed)
        return self._rng

    def new_id(self, namespace: str) -> str:
        """The next id of a namespace, in the format the world declares (`World(id_formats=...)`)."""
        return self.ids.new(namespace)

    def get(self, model: type[T], key: Any, *, what: str | None = None) -> T:
        """The row of `model` with primary key `key`, or the business error "<What> <key> not
        found" (`what` defaults to the model's `__label__`, else its class name)."""
        row = self.session.get(model, key) if key is not None else None
        if row is None:
            label = what or getattr(model, "__label__", None) or model.__name__
            raise WorldError(f"{label} {key} not found")
        return row

    def add(self, *rows: Any) -> None:
        """Stage new or changed rows in the call's transaction (committed with the call)."""
        self.session.add_all(rows)


@cache
def _schema_text(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema())


@dataclass(frozen=True)
class ToolSpec:
    """One tool of a world, with everything derived from its signature and docstring."""

    name: str
    fn: Callable[..., Any]
    title: str | None
    description: str
    read_only: bool
    destructive: bool
    idempotent: bool
    partial_failures: bool  # the tool can fail part-way when a fault profile asks it to
    irreversible: bool  # its effect leaves the world (a message sent, a payment made): a later call cannot undo it
    parameters: tuple[inspect.Parameter, ...]  # without the ToolContext, annotations resolved
    return_annotation: Any
    args_model: type[BaseModel]
    # The JSON Schemas MCP lists for the tool, verbatim, in place of those derived from the
    # signature (a twin lists the real server's: `dataclasses.replace` after registering the tool);
    # None: derived. Calls are still checked by the signature, so both must accept the same values.
    listed_input_schema: dict[str, Any] | None = None
    listed_output_schema: dict[str, Any] | None = None

    @property
    def writes(self) -> bool:
        return not self.read_only

    @property
    def has_limit(self) -> bool:
        """Whether the tool pages its results with a `limit` argument."""
        return any(p.name == "limit" for p in self.parameters)

    def input_schema(self) -> dict[str, Any]:
        """The arguments' JSON schema (a fresh copy: generated once per tool, not per trajectory)."""
        schema: dict[str, Any] = json.loads(_schema_text(self.args_model))
        return schema

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary (CLI listings and the world version hash)."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "read_only": self.read_only,
            "destructive": self.destructive,
            "idempotent": self.idempotent,
            "partial_failures": self.partial_failures,
            "irreversible": self.irreversible,
            "input_schema": self.input_schema(),
        }


def _tool_spec(
    fn: Callable[..., Any],
    *,
    name: str | None,
    title: str | None,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    partial_failures: bool,
    irreversible: bool,
) -> ToolSpec:
    hints = typing.get_type_hints(fn, include_extras=True)
    params = list(inspect.signature(fn).parameters.values())
    if not params or hints.get(params[0].name) is not ToolContext:
        raise TypeError(f"tool {fn.__name__}: the first parameter must be annotated ToolContext")
    resolved: list[inspect.Parameter] = []
    fields: dict[str, Any] = {}
    for p in params[1:]:
        if p.name not in hints:
            raise TypeError(f"tool {fn.__name__}: parameter {p.name!r} has no type annotation")
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"tool {fn.__name__}: *args and **kwargs are not allowed")
        resolved.append(p.replace(annotation=hints[p.name]))
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (hints[p.name], default)
    doc = inspect.getdoc(fn)
    if not doc:
        raise TypeError(f"tool {fn.__name__}: a docstring is required (it is the tool's description)")
    tool_name = name or fn.__name__
    args_model = create_model(f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return ToolSpec(
        name=tool_name,
        fn=fn,
        title=title,
        description=doc,
        read_only=read_only,
        destructive=destructive,
        idempotent=idempotent,
        partial_failures=partial_failures,
        irreversible=irreversible,
        parameters=tuple(resolved),
        return_annotation=hints.get("return", Any),
        args_model=args_model,
    )


SeedFunction = Callable[[SeedContext], None]


class World:
    """A simulated tool world. Tools and the seed function register on the instance:

    world = World("retail", metadata=RetailTable.metadata, policy=Path(...), scales={...})

    @world.tool(read_only=True)
    def get_order(ctx: ToolContext, order_id: str) -> OrderView:
        "Look up an order by its id."
    """

    def __init__(
        self,
        name: str,
        *,
        title: str,
        description: str,
        metadata: MetaData,
        policy: str | Path,
        scales: dict[str, dict[str, Any]],
        epoch: datetime = datetime(2026, 5, 15, 9, 0, tzinfo=UTC),
        tick: timedelta = timedelta(seconds=30),
        revision: str = "1",
        id_formats: IdFormats | None = None,
    ) -> None:
        if "default" not in scales:
            raise ValueError(f"world {name}: scales must include 'default'")
        self.name = name
        self.title = title
        self.description = description
        self.metadata = metadata
        self._policy = policy
        self.scales = scales
        self.epoch = epoch
        self.tick = tick
        self.revision = revision
        self.id_formats: IdFormats = dict(id_formats or {})  # namespace -> (prefix, digits): ctx.new_id
        self.tools: dict[str, ToolSpec] = {}
        self.checks: dict[str, Callable[..., Any]] = {}
        self._seed_fn: SeedFunction | None = None
        self._edge_fn: SeedFunction | None = None

    @classmethod
    def from_manifest(cls, path: str | Path, *, metadata: MetaData, **settings: Any) -> World:
        """The world a manifest declares: a YAML file beside the world's code (`world.yaml`) with
        its `name`, `title`, `description`, `scales` and `id_formats` (namespace: [prefix, digits]),
        the data part of a world, kept as data. The policy is `policy.md` beside the manifest, or
        the file its `policy` names. `settings` (epoch, tick, revision) go to the constructor.

            world = World.from_manifest(Path(__file__).with_name("world.yaml"), metadata=ShopTable.metadata)
        """
        path = Path(path)
        data = load_trusted(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError(f"world manifest {path}: must map keys to values, not hold a {type(data).__name__}")
        unknown = sorted(set(data) - {"name", "title", "description", "scales", "id_formats", "policy"})
        if unknown:
            raise ValueError(f"world manifest {path}: unknown key(s) {', '.join(unknown)}")
        missing = [key for key in ("name", "title", "description", "scales") if key not in data]
        if missing:
            raise ValueError(f"world manifest {path}: missing {', '.join(missing)}")
        formats: dict[str, tuple[str, int]] = {}
        for namespace, value in (data.get("id_formats") or {}).items():
            match value:
                case [str(prefix), int(digits)] if digits > 0:
                    formats[str(namespace)] = (prefix, digits)
                case _:
                    raise ValueError(
                        f"world manifest {path}: id format {namespace!r} must be [prefix, digits > 0], not {value!r}"
                    )
        return cls(
            data["name"],
            title=data["title"],
            description=data["description"],
            metadata=metadata,
            policy=path.with_name(data.get("policy", "policy.md")),
            scales=data["scales"],
            id_formats=formats,
            **settings,
        )

    def __repr__(self) -> str:
        return f"World({self.name!r}, tools={len(self.tools)})"

    @cached_property
    def policy(self) -> str:
        return self._policy.read_text(encoding="utf-8") if isinstance(self._policy, Path) else self._policy

    def tool(
        self,
        *,
        read_only: bool = False,
        destructive: bool = False,
        idempotent: bool = False,
        partial_failures: bool = False,
        irreversible: bool = False,
        name: str | None = None,
        title: str | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a tool. Every tool says whether it only reads; writes may be destructive.
        `partial_failures=True` promises the tool honours `ctx.fault == "partial"`.
        `irreversible=True` says its effect leaves the world (a message sent, a payment made):
        grading counts it even when a later call deletes or reverts its rows."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            if read_only and destructive:
                raise TypeError(f"tool {fn.__name__}: a read-only tool cannot be destructive")
            if read_only and partial_failures:
                raise TypeError(f"tool {fn.__name__}: a read-only tool has nothing to fail part-way")
            if read_only and irreversible:
                raise TypeError(f"tool {fn.__name__}: a read-only tool has no effect to be irreversible")
            spec = _tool_spec(
                fn,
                name=name,
                title=title,
                read_only=read_only,
                destructive=destructive,
                idempotent=idempotent,
                partial_failures=partial_failures,
                irreversible=irreversible,
            )
            if spec.name in self.tools:
                raise ValueError(f"world {self.name}: tool {spec.name!r} registered twice")
            self.tools[spec.name] = spec
            return fn

        return register

    def check(self, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a custom rubric check, for what the built-in checks cannot say. It is called
        as `fn(ctx, **params)` with a `mcpsim.grading.GradingContext` and returns a bool or
        `(passed, reason)`."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            if name in self.checks:
                raise ValueError(f"world {self.name}: check {name!r} registered twice")
            self.checks[name] = fn
            return fn

        return register

    def seeder(self, fn: SeedFunction) -> SeedFunction:
        """Register the seed function that fills a fresh database at a given scale."""
        self._seed_fn = fn
        return fn

    def edge_data(self, fn: SeedFunction) -> SeedFunction:
        """Register the function that turns some seeded rows into edge cases (unicode, very long
        strings, empty optional fields) for fault profiles with `edge_data: true`."""
        self._edge_fn = fn
        return fn

    @property
    def has_edge_data(self) -> bool:
        return self._edge_fn is not None

    def add_edge_data(self, ctx: SeedContext) -> None:
        if self._edge_fn is not None:
            self._edge_fn(ctx)

    def seed(self, ctx: SeedContext) -> None:
        if self._seed_fn is None:
            raise RuntimeError(f"world {self.name} has no seed function")
        self._seed_fn(ctx)

    def scale_params(self, scale: str) -> dict[str, Any]:
        try:
            return self.scales[scale]
        except KeyError:
            raise ValueError(f"world {self.name} has no scale {scale!r}; choose from {sorted(self.scales)}") from None

    @cached_property
    def schema_sql(self) -> str:
        """The CREATE statements of the world's tables and indexes, in a stable order."""
        dialect = sqlite.dialect()
        parts: list[str] = []
        for table in sorted(self.metadata.sorted_tables, key=lambda t: t.name):
            parts.append(str(CreateTable(table).compile(dialect=dialect)).strip())
            for index in sorted(table.indexes, key=lambda i: i.name or ""):
                parts.append(str(CreateIndex(index).compile(dialect=dialect)).strip())
        return ";\n".join(parts)

    def source_files(self) -> list[tuple[str, Path]]:
        """The files that define the world: its whole package folder (code, data, policy,
        tasks), or the one module when the world is not in a package."""
        module = inspect.getmodule(self._seed_fn) if self._seed_fn else None
        if module is None or module.__file__ is None:
            return []
        if not module.__package__:
            return [(Path(module.__file__).name, Path(module.__file__))]
        root = Path(sys.modules[self._defining_package(module.__package__)].__file__ or module.__file__).parent
        return sorted(
            (p.relative_to(root).as_posix(), p)
            for p in root.rglob("*")
            if p.suffix in {".py", ".md", ".yaml", ".yml", ".json"} and "__pycache__" not in p.parts
        )

    def _defining_package(self, package: str) -> str:
        """The outermost package on `package`'s path that holds this world: a seeder in a
        subpackage (`retail.seed`) still makes the whole `retail` folder the world's sources."""
        parts = package.split(".")
        for n in range(1, len(parts) + 1):
            candidate = sys.modules.get(".".join(parts[:n]))
            if candidate is not None and any(value is self for value in vars(candidate).values()):
                return candidate.__name__
        return package

    @cached_property
    def version(self) -> str:
        """A hash of everything that decides what an agent meets: schema, tool signatures, the
        world's source files (seed code and data, tools, policy), the Faker version, scales and
        clock. Stamped on every episode."""
        payload = {
            "name": self.name,
            "revision": self.revision,
            "schema": self.schema_sql,
            "tools": [self.tools[n].describe() for n in sorted(self.tools)],
            "sources": {name: hashlib.sha256(path.read_bytes()).hexdigest() for name, path in self.source_files()},
            "faker": importlib.metadata.version("faker"),  # not `import faker`: a served episode never needs it
            "seeding": hashlib.sha256(Path(seeding.__file__).read_bytes()).hexdigest(),  # SeedContext's helpers
            "policy": self.policy,
            "scales": self.scales,
            "epoch": self.epoch.isoformat(),
            "tick": self.tick.total_seconds(),
            "id_formats": self.id_formats,
        }
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
        return digest[:16]
