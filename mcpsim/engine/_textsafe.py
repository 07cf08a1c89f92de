"""Invalid Unicode from clients: a lone surrogate ("\\udcff", which JSON can spell but UTF-8,
SQLite and JSON writers cannot hold) found, and replaced by U+FFFD where text must be stored."""

from __future__ import annotations

import json
from typing import Any

REPLACEMENT = "\ufffd"


def has_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _holds_surrogate(value: Any) -> bool:
    """Whether any string (or key) in a JSON-like value holds a surrogate code point: the common
    answer, no, in one pass of the C JSON encoder (every string and key, other objects skipped),
    else item by item (iterative: no recursion on hostile nesting)."""
    try:
        text = json.dumps(value, ensure_ascii=False, skipkeys=True, default=_skip)
    except (TypeError, ValueError, RecursionError):
        return _holds_surrogate_walk(value)
    return not text.isascii() and has_surrogate(text)


def _skip(_value: Any) -> None:
    return None


def _holds_surrogate_walk(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and has_surrogate(item):
                return True
        elif isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(key, str) and not key.isascii() and has_surrogate(key):
                    return True
                stack.append(sub)
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def lone_surrogate(value: Any, path: str = "arguments") -> str | None:
    """Where in a JSON-like value a string (or a key) holds a surrogate code point, if anywhere
    (iterative: no recursion on hostile nesting)."""
    if not _holds_surrogate(value):
        return None
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if has_surrogate(item):
                return where
        elif isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(key, str) and has_surrogate(key):
                    return f"{where} (a key)"
                stack.append((sub, f"{where}.{key}"))
        elif isinstance(item, list | tuple):
            stack.extend((sub, f"{where}[{i}]") for i, sub in enumerate(item))
    return None


def scrub(value: Any) -> Any:
    """The value with every surrogate code point replaced by U+FFFD (strings, keys, nested lists
    and dicts; anything else as is). Values without one are returned unchanged."""
    if not _holds_surrogate(value):
        return value
    return _scrub(value)


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return (
            "".join(REPLACEMENT if "\ud800" <= c <= "\udfff" else c for c in value) if has_surrogate(value) else value
        )
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value
