"""The scalar values inside JSON-like data (mappings, lists and tuples, nested): one walk for every
place that reads values out of arguments, results or what a user knows. A leaf module."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def leaves(value: Any) -> Iterator[Any]:
    """Every value inside `value` that is not a mapping, list or tuple, depth first; a mapping's keys
    are not values. `None` is yielded like any other value."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from leaves(item)
    else:
        yield value
