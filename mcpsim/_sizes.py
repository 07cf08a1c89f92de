"""Byte sizes as people write them (`512MiB`, `4GB`) and read them, and the default template budget.
A leaf module that imports nothing heavy: the CLI and the server's settings read sizes before a stdio
server answers `initialize`, without loading the engine."""

from __future__ import annotations

import re

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "kib": 1024,
    "m": 1000**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1000**3,
    "gb": 1000**3,
    "gib": 1024**3,
    "t": 1000**4,
    "tb": 1000**4,
    "tib": 1024**4,
}


def parse_size(text: str | int) -> int:
    """A byte count from `4294967296`, `512MB`, `4GiB`, `1.5 GB` (SI or binary units)."""
    if isinstance(text, int):
        return text
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    if match is None or match.group(2).lower() not in _UNITS:
        raise ValueError(f"{text!r} is not a size (use bytes, or a number with KB, MB, GB, KiB, MiB or GiB)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def format_size(n: int) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


DEFAULT_TEMPLATE_BYTES = 1024**3  # 1 GiB of templates kept in memory per cache
