"""Reading a spec as untrusted data: one loader for every path that reads one (`load_spec`,
`parse_spec` of a text or of data already read, stdin, a model's answer), within the bounds of
`mcpsim.specs._limits`. YAML is composed node by node and refused at the first anchor or alias (an
alias bomb of a few hundred bytes expands to millions of values), the first node past the depth,
node or string limits, before anything is built; data already read (JSON, a catalogue's expansion)
is walked without recursion. A spec past a bound is a `SpecError` naming the limit, its value and
the place: `entities.orders.fields: 812 fields, the limit is 200 (MAX_FIELDS)`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from mcpsim.specs import _limits as lim

# Bidirectional embeddings, overrides and isolates: text that reads in another order than it runs.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


class SpecError(ValueError):
    """A spec that cannot be compiled, with the place it went wrong; `details` lists each problem
    on its own (one line each), for a model asked to repair its spec."""

    def __init__(self, message: str, details: list[str] | None = None) -> None:
        super().__init__(message)
        self.details = details if details is not None else [message]


def _where(path: list[str] | tuple[str, ...]) -> str:
    text = "".join(step if step.startswith("[") else f".{step}" for step in path).lstrip(".")
    return text or "the spec"


def _refuse(source: str, path: list[str] | tuple[str, ...], what: str, limit: str) -> SpecError:
    value = getattr(lim, limit)
    return SpecError(f"{source}: {_where(path)}: {what}, the limit is {value:,} ({limit})")


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with every node checked as it is composed (its path kept for errors)."""

    def __init__(self, text: str, source: str) -> None:
        super().__init__(text)
        self.source = source
        self.path: list[str] = []
        self.nodes = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()
        if isinstance(index, yaml.ScalarNode):
            step = str(index.value)[:80]
        elif isinstance(index, int):
            step = f"[{index}]"
        else:
            step = "(a key)" if parent is not None else ""
        self.path.append(step)
        try:
            self._check(event)
            return super().compose_node(parent, index)
        finally:
            self.path.pop()

    def _check(self, event: yaml.Event) -> None:
        path = [p for p in self.path if p]
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            line = event.start_mark.line + 1 if event.start_mark else "?"
            raise SpecError(f"{self.source}: {_where(path)} (line {line}): YAML anchors and aliases are not allowed")
        self.nodes += 1
        if self.nodes > lim.MAX_NODES:
            raise _refuse(self.source, path, "too many values", "MAX_NODES")
        if len(self.path) > lim.MAX_DEPTH:
            raise _refuse(self.source, path[: lim.MAX_DEPTH], "nested too deeply", "MAX_DEPTH")
        if isinstance(event, yaml.ScalarEvent) and len(event.value) > lim.MAX_STRING:
            raise _refuse(self.source, path, f"a string of {len(event.value):,} characters", "MAX_STRING")


def read_text(text: str, source: str) -> dict[str, Any]:
    """A spec's data from its YAML or JSON text (JSON is YAML), read within the bounds."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > lim.MAX_SPEC_BYTES:
        raise _refuse(source, [], f"{size:,} bytes", "MAX_SPEC_BYTES")
    loader = _BoundedLoader(text, source)
    try:
        data = loader.get_single_data()
    except yaml.YAMLError as exc:
        raise SpecError(f"{source}: {exc}") from None
    except SpecError:
        raise
    except ValueError as exc:  # a number past Python's digit limit, a date out of range
        raise SpecError(f"{source}: {exc}") from None
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        raise SpecError(f"{source}: a spec is a mapping, got {type(data).__name__}")
    return data


def read_file(path: str | Path) -> dict[str, Any]:
    """A spec's data from a file, read no further than the size limit."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(lim.MAX_SPEC_BYTES + 1)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}: {exc}") from None
    return read_text(text, str(path))


def check_data(data: Any, source: str) -> None:
    """Refuse spec data past a bound: the counts first (each names its part of the spec), then
    nesting, values and strings over the whole, walked without recursion."""
    if not isinstance(data, dict):
        return  # the schema's error says what a spec is
    _check_counts(data, source)
    nodes = 0
    stack: list[tuple[Any, tuple[str, ...]]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        nodes += 1
        if nodes > lim.MAX_NODES:
            raise _refuse(source, path, "too many values", "MAX_NODES")
        if len(path) >= lim.MAX_DEPTH:
            raise _refuse(source, path, "nested too deeply", "MAX_DEPTH")
        if isinstance(value, str):
            _check_string(source, path, value)
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str):
                    _check_string(source, path, key)
                stack.append((item, (*path, str(key)[:80])))
        elif isinstance(value, list | tuple):
            stack.extend((item, (*path, f"[{i}]")) for i, item in enumerate(value))


def _check_string(source: str, path: tuple[str, ...], text: str) -> None:
    if len(text) > lim.MAX_STRING:
        raise _refuse(source, path, f"a string of {len(text):,} characters", "MAX_STRING")
    if found := _BIDI.search(text):
        raise SpecError(
            f"{source}: {_where(path)}: the bidirectional control character U+{ord(found.group()):04X} "
            "makes text read in another order than it is written"
        )


def _count(source: str, path: tuple[str, ...], value: Any, what: str, limit: str) -> None:
    if isinstance(value, dict | list) and len(value) > getattr(lim, limit):
        raise _refuse(source, path, f"{len(value):,} {what}", limit)


def _check_counts(data: dict[str, Any], source: str) -> None:
    entities = data.get("entities")
    _count(source, ("entities",), entities, "entities", "MAX_ENTITIES")
    for name, entity in entities.items() if isinstance(entities, dict) else []:
        if isinstance(entity, dict):
            _check_entity(source, ("entities", str(name)), entity)
    actions = data.get("actions")
    _count(source, ("actions",), actions, "actions", "MAX_ACTIONS")
    for i, action in enumerate(actions) if isinstance(actions, list) else []:
        if isinstance(action, dict):
            _check_action(source, ("actions", f"[{i}]"), action)
    _count(source, ("invariants",), data.get("invariants"), "invariants", "MAX_INVARIANTS")
    _count(source, ("policy",), data.get("policy"), "policy rules", "MAX_POLICY_RULES")
    _count(source, ("tasks",), data.get("tasks"), "tasks", "MAX_TASKS")
    scales = data.get("scales")
    _count(source, ("scales",), scales, "scales", "MAX_SCALES")
    for scale, counts in scales.items() if isinstance(scales, dict) else []:
        for entity, rows in counts.items() if isinstance(counts, dict) else []:
            if isinstance(rows, int) and rows > lim.MAX_ROWS:
                raise _refuse(source, ("scales", str(scale), str(entity)), f"{rows:,} rows", "MAX_ROWS")


def _check_entity(source: str, path: tuple[str, ...], entity: dict[str, Any]) -> None:
    fields = entity.get("fields")
    _count(source, (*path, "fields"), fields, "fields", "MAX_FIELDS")
    for name, f in fields.items() if isinstance(fields, dict) else []:
        if not isinstance(f, dict):
            continue
        where = (*path, "fields", str(name))
        _count(source, (*where, "values"), f.get("values"), "values", "MAX_ENUM_VALUES")
        pattern = f.get("pattern")
        if isinstance(pattern, str) and len(pattern) > lim.MAX_PATTERN:
            raise _refuse(source, (*where, "pattern"), f"a pattern of {len(pattern):,} characters", "MAX_PATTERN")
        generator = f.get("generator")
        if isinstance(generator, dict):
            _count(source, (*where, "generator", "choices"), generator.get("choices"), "choices", "MAX_ENUM_VALUES")
            _count(source, (*where, "generator", "weights"), generator.get("weights"), "weights", "MAX_ENUM_VALUES")
            if "faker" in generator and (problem := lim.faker_problem(generator["faker"], generator.get("args", {}))):
                raise SpecError(f"{source}: {_where((*where, 'generator'))}: {problem}")
    machine = entity.get("state_machine")
    if isinstance(machine, dict):
        _count(source, (*path, "state_machine", "transitions"), machine.get("transitions"), "states", "MAX_ENUM_VALUES")


def _check_action(source: str, path: tuple[str, ...], action: dict[str, Any]) -> None:
    for key in ("inputs", "filters", "set"):
        _count(source, (*path, key), action.get(key), key, "MAX_FIELDS")
    rules = sum(len(found) for key in ("preconditions", "effects") if isinstance(found := action.get(key), list))
    if rules > lim.MAX_RULES:
        raise _refuse(source, path, f"{rules:,} preconditions and effects", "MAX_RULES")
