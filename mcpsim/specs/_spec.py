"""The world spec: a declarative description of a world that `mcpsim.specs._compiler` turns into
a real `World`. Written as YAML or JSON; `schemas/world-spec.schema.json` is generated from these
models (`python -m mcpsim.acceptance schema`).

Operands, used by preconditions, effects, `set` values and count filters, are one of:
- a path string: `<alias>.<field>` (a row in scope: the action's row, rows it refers to),
  `args.<name>` (an argument of the call), `now` (the virtual clock, ISO text) or `today`;
- money is in cents everywhere in a spec (arguments are converted from dollars before use);
- any other JSON value: a literal (a literal string is written `{value: "text"}`);
- `{count: <entity>, where: {<field>: <operand>, ...}}`: how many rows match.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mcpsim._patterns import pattern_problem, searches
from mcpsim.specs._bounded import SpecError as SpecError  # raised by the loader; imported from here as ever
from mcpsim.specs._bounded import check_data, read_file, read_text
from mcpsim.specs._limits import faker_problem
from mcpsim.tasks import Task

NAME = r"^[a-z][a-z0-9_]{0,39}$"
Name = Annotated[str, Field(pattern=NAME, description="lower_snake_case, at most 40 characters")]

FieldType = Literal["str", "int", "float", "money", "bool", "date", "datetime", "enum", "ref"]
NUMERIC = ("int", "float", "money")
ISO_DATE = r"^\d{4}-\d{2}-\d{2}$"
ISO_DATETIME = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:\d{2}|Z)?$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- generators -------------------------------------------------------------------------------


class FakerGen(_Model):
    """A Faker provider with its keyword arguments: `{faker: company}` or
    `{faker: pystr, args: {max_chars: 8}}`. Providers that read today's date are refused, and so is
    any provider or argument not on the allow-list (`mcpsim.specs._limits.FAKER_PROVIDERS`)."""

    faker: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _no_clock(self) -> FakerGen:
        if (problem := faker_problem(self.faker, self.args)) is not None:
            raise ValueError(problem)
        return self


class ChoiceGen(_Model):
    """One of `choices`, with optional `weights` (same length)."""

    choices: list[Any] = Field(min_length=1)
    weights: list[float] | None = None

    @model_validator(mode="after")
    def _weights_match(self) -> ChoiceGen:
        if self.weights is not None and len(self.weights) != len(self.choices):
            raise ValueError(f"{len(self.weights)} weights for {len(self.choices)} choices")
        return self


class RangeGen(_Model):
    """A uniform number in [min, max]: an integer for int and money (cents), else a float."""

    range: tuple[float, float]

    @model_validator(mode="after")
    def _ordered(self) -> RangeGen:
        if self.range[0] > self.range[1]:
            raise ValueError(f"range {list(self.range)} is empty")
        return self


class DateRangeGen(_Model):
    """A date or datetime between `days[0]` and `days[1]` days from the world's epoch."""

    days: tuple[int, int]


class ConstGen(_Model):
    const: Any


class RefGen(_Model):
    """A random existing row of the referenced entity (the default for ref fields)."""

    ref: Literal["random"] = "random"


Generator = FakerGen | ChoiceGen | RangeGen | DateRangeGen | ConstGen | RefGen


# -- entities ---------------------------------------------------------------------------------


class FieldSpec(_Model):
    type: FieldType
    description: str = ""
    optional: bool = False
    values: list[str] | None = Field(default=None, description="enum: the allowed values")
    entity: str | None = Field(default=None, description="ref: the entity referred to")
    min: float | None = None
    max: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    unique: bool = False
    searchable: bool = False
    default: Any = None
    generator: Generator | None = None

    @model_validator(mode="after")
    def _consistent(self) -> FieldSpec:
        if self.type == "enum" and not self.values:
            raise ValueError("an enum field needs values")
        if self.type != "enum" and self.values is not None:
            raise ValueError(f"values are for enum fields, not {self.type}")
        if (self.type == "ref") != (self.entity is not None):
            raise ValueError("a ref field, and only a ref field, names an entity")
        if self.pattern is not None and (problem := pattern_problem(self.pattern)) is not None:
            # agents' arguments are matched in linear time (mcpsim._patterns): no look-around, no backreferences
            raise ValueError(f"pattern {self.pattern!r} cannot be matched in linear time: {problem}")
        return self

    def problem(self, value: Any) -> str | None:
        """What is wrong with a value stored in this field, or None."""
        if value is None:
            return None if self.optional else "is empty but not optional"
        if self.type == "enum" and value not in (self.values or []):
            return f"{value!r} is not one of {self.values}"
        if self.type in NUMERIC:
            if self.min is not None and value < self.min:
                return f"{value} is below the minimum {self.min:g}"
            if self.max is not None and value > self.max:
                return f"{value} is above the maximum {self.max:g}"
        if isinstance(value, str):
            return self._text_problem(value)
        return None

    def _text_problem(self, value: str) -> str | None:
        if self.max_length is not None and len(value) > self.max_length:
            return f"is {len(value)} characters, more than {self.max_length}"
        if self.min_length is not None and len(value) < self.min_length:
            return f"is {len(value)} characters, fewer than {self.min_length}"
        pattern = self.pattern or {"date": ISO_DATE, "datetime": ISO_DATETIME}.get(self.type)
        if pattern and not searches(pattern, value):
            return f"{value!r} does not match {pattern}"
        return None


class StateMachine(_Model):
    """A status field whose changes follow `transitions` (state -> states it may become)."""

    field: Name
    initial: str
    transitions: dict[str, list[str]]


class IdFormat(_Model):
    prefix: str = Field(pattern=r"^[A-Z#]{1,4}$")
    digits: int = Field(ge=4, le=12)


class EntitySpec(_Model):
    label: str | None = Field(default=None, description="the name in messages (default: the entity, capitalised)")
    table: Name | None = Field(default=None, description="default: the entity name plus s")
    id: IdFormat
    fields: dict[Name, FieldSpec] = Field(min_length=1)
    state_machine: StateMachine | None = None
    owner: Name | None = Field(
        default=None,
        description="the reference field tying a row to the person served: a ref to them, or to a row with an owner",
    )


# -- invariants -------------------------------------------------------------------------------


class Invariant(_Model):
    """A rule every written row keeps. `non_negative`: field >= 0; `capacity`: field <= limit
    (a number) or <= limit_field; `unique`: no two rows share `fields`; `ownership`: a write to
    a row of `entity` that names `field` as an argument must name the row's own value."""

    kind: Literal["non_negative", "capacity", "unique", "ownership"]
    entity: Name
    field: Name | None = None
    fields: list[Name] | None = None
    limit: float | None = None
    limit_field: Name | None = None
    name: Name | None = Field(default=None, description="the error's name (default derived from kind and field)")
    message: str | None = None

    @model_validator(mode="after")
    def _complete(self) -> Invariant:
        if self.kind == "unique" and not self.fields:
            raise ValueError("a unique invariant lists its fields")
        if self.kind != "unique" and not self.field:
            raise ValueError(f"a {self.kind} invariant names its field")
        if self.kind == "capacity" and (self.limit is None) == (self.limit_field is None):
            raise ValueError("a capacity invariant has a limit or a limit_field (one of them)")
        return self

    @property
    def error_name(self) -> str:
        return self.name or f"{self.kind}_{self.entity}_{self.field or '_'.join(self.fields or [])}"


# -- actions ----------------------------------------------------------------------------------

Operand = Any  # see the module docstring


class Condition(_Model):
    left: Operand
    op: Literal["eq", "ne", "lt", "le", "gt", "ge", "in", "not_in"]
    right: Operand


class Precondition(_Model):
    """A business rule checked before the action's writes; violated, the call is refused with
    `message` (placeholders: `{alias.field}`, `{args.name}`) and nothing changes."""

    name: Name
    message: str = Field(min_length=3)
    require: Condition


class Effect(_Model):
    """A write besides the action's own: `{row: book, field: copies, add: -1}`,
    `{row: member, field: credit, subtract: args.amount}` or `{row: loan, field: note, set: ...}`."""

    row: Name
    field: Name
    add: Operand = None
    subtract: Operand = None
    set: Operand = None

    @model_validator(mode="after")
    def _one(self) -> Effect:
        given = [k for k in ("add", "subtract", "set") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"an effect does exactly one of add, subtract, set (got {given or 'none'})")
        return self


class PartialFailureSpec(_Model):
    """When a fault profile asks for a partial failure, the action's row is written in `state`,
    its effects are skipped, and the agent reads `message`."""

    state: str
    message: str = Field(min_length=3)


ActionKind = Literal["get", "list", "search", "create", "update", "transition", "transfer", "delete"]


class ActionSpec(_Model):
    name: Name
    kind: ActionKind
    entity: Name
    description: str = Field(min_length=3, description="the tool's description")
    title: str | None = None
    inputs: list[Name] = Field(default_factory=list, description="create/update/transition: fields the caller gives")
    set: dict[Name, Operand] = Field(default_factory=dict, description="create/update: fields set from operands")
    filters: list[Name] = Field(default_factory=list, description="list: fields the caller may filter on")
    max_limit: int = Field(default=50, ge=1, le=500, description="list/search: the largest page")
    field: Name | None = Field(default=None, description="transfer: the numeric field moved between two rows")
    to: str | None = Field(default=None, description="transition: the state the row moves to")
    preconditions: list[Precondition] = Field(default_factory=list)
    effects: list[Effect] = Field(default_factory=list)
    partial_failure: PartialFailureSpec | None = None
    destructive: bool | None = None
    irreversible: bool = False

    @property
    def read_only(self) -> bool:
        return self.kind in ("get", "list", "search")


# -- policy and the world ---------------------------------------------------------------------


class PolicyRule(_Model):
    """`identity`: the agent confirms who it is talking to before writes; `confirm`: it asks for
    an explicit yes before the listed actions; `limit`: a stated limit (text); `text`: free text."""

    kind: Literal["identity", "confirm", "limit", "text"]
    text: str | None = None
    actions: list[Name] = Field(default_factory=list)


class WorldSpec(_Model):
    name: Name
    title: str = Field(min_length=1)
    description: str = Field(min_length=1)
    epoch: str = Field(default="2026-05-15T09:00:00+00:00", description="the virtual clock's start, ISO 8601")
    scales: dict[str, dict[Name, int]] = Field(description="scale -> entity -> row count; must include default")
    entities: dict[Name, EntitySpec] = Field(min_length=1)
    invariants: list[Invariant] = Field(default_factory=list)
    actions: list[ActionSpec] = Field(min_length=1)
    policy: list[PolicyRule] = Field(default_factory=list)
    calculator: bool = Field(default=False, description="add the standard calculate tool")
    tasks: list[Task] = Field(
        default_factory=list,
        description="hand-written tasks in mcpsim's task format, served and validated beside the generated ones",
    )
    generated_tasks: int = Field(
        default=10,
        ge=0,
        le=200,
        description="how many tasks the generator adds when the world is loaded or validated (seed 0)",
    )

    @model_validator(mode="after")
    def _references_resolve(self) -> WorldSpec:
        if not _STATIC_CHECKS:  # never: importing this module runs the package's __init__, which imports them
            raise RuntimeError("the spec's static checks are not registered: import mcpsim.specs._lint")
        errors = [error for check in _STATIC_CHECKS for error in check(self)]
        if errors:
            raise ValueError("; ".join(errors))
        return self

    def digest(self) -> str:
        """A hash of the spec's content (not its formatting): the compiled world's revision."""
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def table_of(self, entity: str) -> str:
        return self.entities[entity].table or f"{entity}s"

    def label_of(self, entity: str) -> str:
        return self.entities[entity].label or entity.replace("_", " ").capitalize()

    def identity_entity(self) -> str | None:
        """The entity the user is: the one an ownership invariant's field refers to (a loan's
        member), else the entity with a name that the most reference fields point at; None if
        none."""
        for inv in self.invariants:
            if inv.kind == "ownership" and inv.field:
                f = self.entities[inv.entity].fields.get(inv.field)
                if f is not None and f.type == "ref" and f.entity:
                    return f.entity
        pointing = Counter(f.entity for e in self.entities.values() for f in e.fields.values() if f.type == "ref")
        referred = {name: pointing[name] for name, e in self.entities.items() if "name" in e.fields}
        best = max(referred.items(), key=lambda kv: (kv[1], kv[0]), default=None)
        return best[0] if best and best[1] else None


# The static checks every parsed spec passes (`mcpsim.specs._lint.static_errors`: every name
# resolves, every state is declared, every operand reads something that exists). They read these
# models, so they sit above them and register themselves here when their module is imported.
_STATIC_CHECKS: list[Callable[[WorldSpec], list[str]]] = []


def register_static_check(check: Callable[[WorldSpec], list[str]]) -> None:
    """Run `check` on every spec parsed from now on; the errors it returns refuse the spec."""
    if check not in _STATIC_CHECKS:
        _STATIC_CHECKS.append(check)


def parse_spec(data: dict[str, Any] | str, *, source: str = "spec") -> WorldSpec:
    """A spec from its data, or from its YAML or JSON text, read within the bounds of
    `mcpsim.specs._limits` (a spec past one is refused before it is validated)."""
    if isinstance(data, str):
        data = read_text(data, source)
    check_data(data, source)
    try:
        return WorldSpec.model_validate(data)
    except ValidationError as exc:
        details = [f"{'.'.join(map(str, e['loc'])) or 'spec'}: {e['msg']}" for e in exc.errors()]
        raise SpecError(f"{source}: {exc}", details) from None


def load_spec(path: str | Path) -> WorldSpec:
    """A spec from a YAML or JSON file (JSON is YAML), read within the bounds."""
    return parse_spec(read_file(path), source=str(path))


def json_schema() -> dict[str, Any]:
    schema = WorldSpec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://mcpsim.dev/schemas/world-spec.schema.json"
    return schema
