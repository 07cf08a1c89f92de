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


def adjacent_placeholders(message: str) -> tuple[str, str] | None:
    """The first two placeholders with no text between them, or None: a refusal is recognised by
    the text between its placeholders, so two side by side could split any text anywhere."""
    parts = PLACEHOLDER.split(message)
    for i in range(2, len(parts) - 1, 2):
        if parts[i] == "":
            return parts[i - 1], parts[i + 1]
    return None


@dataclass(frozen=True)
class MessagePattern:
    """A refusal message with any text in its placeholders, matched without backtracking: its
    literal parts in order, the first at the start, the last at the end, each one in between found
    at its leftmost place after the one before (leftmost is never wrong: a placeholder takes any
    text, so the earliest place leaves the most room for the rest). Work is linear in the text
    per literal part, whatever the message."""

    parts: tuple[str, ...]  # the literal text around the placeholders, len(placeholders) + 1 parts

    def match(self, text: str) -> bool:
        """Whether the text is the message (a final newline aside, as a regex's `$` allows)."""
        return self._whole(text) or (text.endswith("\n") and self._whole(text[:-1]))

    def _whole(self, text: str) -> bool:
        first, last = self.parts[0], self.parts[-1]
        if len(self.parts) == 1:
            return text == first
        if len(text) < len(first) + len(last) or not text.startswith(first) or not text.endswith(last):
            return False
        at, end = len(first), len(text) - len(last)
        for part in self.parts[1:-1]:
            found = text.find(part, at, end)
            if found < 0:
                return False
            at = found + len(part)
        return True


def message_pattern(message: str) -> MessagePattern:
    """What matches the message with any text in its placeholders: how a refusal is recognised."""
    return MessagePattern(tuple(PLACEHOLDER.split(message)[::2]))
