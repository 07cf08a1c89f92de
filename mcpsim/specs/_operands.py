"""Operands of preconditions and effects, parsed once: paths into rows in scope, arguments, the
clock, literals and counts (see `mcpsim.specs._spec`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_PATH = re.compile(r"^([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)$")
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*\.[a-z][a-z0-9_]*)\}")


@dataclass(frozen=True)
class Path:
    alias: str  # a row in scope, or "args"
    field: str


@dataclass(frozen=True)
class Now:
    date_only: bool = False  # `today`: the clock's date


@dataclass(frozen=True)
class Literal:
    value: Any


@dataclass(frozen=True)
class Count:
    entity: str
    where: tuple[tuple[str, Operand], ...]


Operand = Path | Now | Literal | Count


def parse_operand(raw: Any) -> Operand:
    if isinstance(raw, str):
        if raw in ("now", "today"):
            return Now(date_only=raw == "today")
        if match := _PATH.match(raw):
            return Path(match.group(1), match.group(2))
        raise ValueError(
            f"operand {raw!r} is neither a path (alias.field, args.name), now nor today; write {{value: ...}}"
        )
    if isinstance(raw, dict):
        if set(raw) == {"value"}:
            return Literal(raw["value"])
        if set(raw) <= {"count", "where"} and "count" in raw:
            where = raw.get("where") or {}
            if not isinstance(where, dict):
                raise ValueError(f"count {raw['count']!r}: where is a mapping of field to operand")
            return Count(str(raw["count"]), tuple((str(k), parse_operand(v)) for k, v in sorted(where.items())))
        raise ValueError(f"operand {raw!r}: a mapping is {{value: ...}} or {{count: entity, where: ...}}")
    return Literal(raw)


def paths_of(operand: Operand) -> list[Path]:
    """Every path an operand reads, counts' filters included."""
    if isinstance(operand, Path):
        return [operand]
    if isinstance(operand, Count):
        return [p for _, o in operand.where for p in paths_of(o)]
    return []


def placeholders(message: str) -> list[Path]:
    return [Path(*m.split(".", 1)) for m in PLACEHOLDER.findall(message)]


def message_pattern(message: str) -> re.Pattern[str]:
    """A regex matching the message with any text in its placeholders: how a refusal is recognised."""
    parts = PLACEHOLDER.split(message)
    regex = "".join(re.escape(part) if i % 2 == 0 else ".*?" for i, part in enumerate(parts))
    return re.compile(f"^{regex}$", re.DOTALL)
