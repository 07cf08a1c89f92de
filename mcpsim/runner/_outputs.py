"""A fast yes for the output schemas the runner's clients check every structured result against.

The SDK client validates each result with a generic JSON Schema validator (`jsonschema`), which
walks the schema keyword by keyword, building a child validator for every value: for mcpsim's
large nested results that was the largest share of an in-process episode's CPU. The schemas the
data plane publishes (`serve/mcp.py: lean_schema`) use a handful of keywords, so each is compiled
here once into plain Python checks of those keywords. A result that passes them is valid; any
other answer, and any schema with a keyword not handled here, goes to the SDK's validator, so the
errors (and the message a caller sees) are exactly the SDK's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

Check = Callable[[Any], bool]

# Keywords that assert nothing (draft 2020-12's annotations, without a format checker).
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "format"}
)
_HANDLED = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "items"}


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": _is_integer,
    "number": _is_number,
}


class Unhandled(Exception):
    """The schema uses something this module does not check: leave it to the SDK's validator."""


def compile_check(schema: Any) -> Check:
    """A function that returns True only for instances `schema` accepts (draft 2020-12, no
    format checker). Raises Unhandled for a schema outside the handled keywords."""
    if schema is True:
        return lambda _v: True
    if not isinstance(schema, dict) or not set(schema) <= _HANDLED:
        raise Unhandled
    checks: list[Check] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not names or any(not isinstance(n, str) or n not in _TYPES for n in names):
            raise Unhandled
        kinds = [_TYPES[n] for n in names]
        checks.append(kinds[0] if len(kinds) == 1 else lambda v: any(k(v) for k in kinds))
    object_checks = _object_checks(schema)
    if object_checks is not None:
        checks.append(lambda v: not isinstance(v, dict) or object_checks(v))
    if "items" in schema:
        item = compile_check(schema["items"])
        checks.append(lambda v: not isinstance(v, list) or all(item(x) for x in v))
    if not checks:
        return lambda _v: True
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(c(v) for c in checks)


def _object_checks(schema: dict[str, Any]) -> Check | None:
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list):
        raise Unhandled
    if not properties and not required and extra is True:
        return None
    fields = {name: compile_check(sub) for name, sub in properties.items()}
    if extra is True:
        rest: Check | None = None
    elif extra is False:
        rest = lambda _v: False  # noqa: E731
    else:
        rest = compile_check(extra)
    needed = tuple(required)

    def check(value: dict[str, Any]) -> bool:
        for name in needed:
            if name not in value:
                return False
        for name, item in value.items():
            field = fields.get(name)
            if field is not None:
                if not field(item):
                    return False
            elif rest is not None and not rest(item):
                return False
        return True

    return check


class CheckedFirst:
    """The SDK's compiled validator, asked only when the fast check does not say yes: the same
    interface (`iter_errors` and the rest delegated), the same errors."""

    __slots__ = ("check", "validator")

    def __init__(self, validator: Any, check: Check) -> None:
        self.validator = validator
        self.check = check

    def iter_errors(self, instance: Any) -> Iterator[Any]:
        if self.check(instance):
            return iter(())
        return iter(self.validator.iter_errors(instance))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.validator, name)


def checked_first(validator: Any, schema: dict[str, Any]) -> Any:
    """`validator` with a fast yes in front when the schema allows it (and the validator checks
    no formats); else `validator` itself."""
    if getattr(validator, "format_checker", None) is not None or "$schema" in schema:
        return validator
    try:
        return CheckedFirst(validator, compile_check(schema))
    except Unhandled:
        return validator
