"""Drift: what changed in a real server's tools since its twin was made. A twin records the server's
name and version (`TwinSpec.server`, from `initialize`'s `serverInfo`) and every tool's schemas as
the server listed them; a newer listing of the same server (a harvest's result, a recording, or a
newer twin) is compared with it tool by tool: the tools added and removed, and for each tool in
both, every JSON path of its input schema, output schema, description and title whose value
differs. Nothing drifts silently: `python -m mcpsim.twins drift TWIN NEWER` exits 1 when anything
differs.

    python -m mcpsim.twins drift memory.twin.json benchmarks/harvest/results/npm-...-server-memory.json

A listing from disk is untrusted data: it is read within the bounds of `mcpsim.twins._limits` (its
size, its nesting, its number of tools), and each tool is checked for its type before it is used."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcpsim.twins import _limits as lim
from mcpsim.twins._twin_spec import TwinSpec
from mcpsim.twins.recordings import CALLS_FILE, load_recording

MAX_PATHS = 50  # differing paths reported per tool and part
COMPARED = ("inputSchema", "outputSchema", "description", "title")


class ListingError(ValueError):
    """A listing that cannot be read: the file and what is wrong with it."""


@dataclass(frozen=True)
class Listing:
    """A server's name, version and tools (as on the wire: name, inputSchema, outputSchema, ...)."""

    name: str
    version: str
    tools: list[dict[str, Any]]
    instructions: str = ""  # a harvest result's `initialize` instructions, when the server gave some


def twin_listing(spec: TwinSpec) -> Listing:
    """What the twin recorded of its server: name, version, and each tool's schemas and texts."""
    tools = []
    for t in spec.tools:
        tool: dict[str, Any] = {"name": t.name, "inputSchema": t.input_schema}
        optional = {"outputSchema": t.output_schema, "description": t.description, "title": t.title}
        tools.append(tool | {k: v for k, v in optional.items() if v})  # what the server left out, left out
    return Listing(str(spec.server.get("name", "")), str(spec.server.get("version", "")), tools)


def _depth(value: Any) -> int:
    """The nesting depth of a JSON value, walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, dict):
            stack += [(v, depth + 1) for v in node.values()]
        elif isinstance(node, list):
            stack += [(v, depth + 1) for v in node]
    return deepest


def _checked_tools(tools: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(tools, list):
        raise ListingError(f"{where}: tools is not a list")
    if len(tools) > lim.MAX_RECORDING_TOOLS:
        raise ListingError(f"{where}: {len(tools):,} tools, the limit is {lim.MAX_RECORDING_TOOLS:,}")
    for n, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise ListingError(f"{where}: tools[{n}] is not a tool with a name")
        for key in ("inputSchema", "outputSchema"):
            if key in tool and not isinstance(tool[key], dict | None):
                raise ListingError(f"{where}: tools[{n}].{key} is not a JSON object")
    return tools


def read_listing(path: str | Path) -> Listing:
    """A listing from disk: a harvest result (JSON with `server_info` and `tools`), a twin spec,
    or a `mcpsim record` directory (its last tools/list answer and its initialize's serverInfo)."""
    path = Path(path)
    if path.is_dir():
        if not (path / CALLS_FILE).exists():
            raise ListingError(f"{path}: a directory without {CALLS_FILE} is not a recording")
        recording = load_recording(path)
        info = recording.server
        return Listing(str(info.get("name", "")), str(info.get("version", "")), recording.tools)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ListingError(f"{path}: {exc.strerror}") from None
    if size > lim.MAX_RECORDING_BYTES:
        raise ListingError(f"{path}: {size:,} bytes, the limit is {lim.MAX_RECORDING_BYTES:,}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as exc:
        raise ListingError(f"{path}: not JSON ({str(exc)[:200]})") from None
    if _depth(data) > lim.MAX_RECORDING_DEPTH:
        raise ListingError(f"{path}: nested deeper than {lim.MAX_RECORDING_DEPTH} levels")
    if not isinstance(data, dict):
        raise ListingError(f"{path}: not a JSON object")
    if data.get("kind") == "twin":
        return twin_listing(TwinSpec.model_validate(data))
    if data.get("outcome", "listed") != "listed":
        raise ListingError(f"{path}: the harvest did not list this server ({data.get('reason', 'failed')})")
    info = data.get("server_info") or {}
    if not isinstance(info, dict):
        raise ListingError(f"{path}: server_info is not a JSON object")
    initialize = data.get("initialize") or {}
    instructions = initialize.get("instructions") if isinstance(initialize, dict) else None
    return Listing(
        str(info.get("name", "")),
        str(info.get("version", "")),
        _checked_tools(data.get("tools"), str(path)),
        instructions if isinstance(instructions, str) else "",
    )


def _paths(old: Any, new: Any, at: str, found: list[str]) -> None:
    """JSON pointers where `old` and `new` differ (a key only one side has, or a different value)."""
    if len(found) >= MAX_PATHS:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            where = f"{at}/{str(key).replace('~', '~0').replace('/', '~1')}"
            if key not in new:
                found.append(f"{where} removed")
            elif key not in old:
                found.append(f"{where} added")
            else:
                _paths(old[key], new[key], where, found)
        return
    if json.dumps(old, sort_keys=True) != json.dumps(new, sort_keys=True):
        found.append(f"{at or '/'} changed")


def schema_drift(twin: TwinSpec | Listing, newer: Listing) -> dict[str, Any]:
    """The tools added, removed and changed between the twin's listing and a newer one; for each
    changed tool, the parts that differ and at which JSON paths (at most MAX_PATHS each)."""
    old = twin_listing(twin) if isinstance(twin, TwinSpec) else twin
    before = {t["name"]: t for t in old.tools}
    after = {t["name"]: t for t in newer.tools}
    changed: dict[str, dict[str, list[str]]] = {}
    for name in sorted(before.keys() & after.keys()):
        parts = {}
        for part in COMPARED:
            found: list[str] = []
            _paths(before[name].get(part), after[name].get(part), "", found)
            if found:
                parts[part] = found
        if parts:
            changed[name] = parts
    added, removed = sorted(after.keys() - before.keys()), sorted(before.keys() - after.keys())
    return {
        "server": {"name": old.name, "twinned": old.version, "newer_name": newer.name, "newer": newer.version},
        "added": added,
        "removed": removed,
        "changed": changed,
        "unchanged": len(before.keys() & after.keys()) - len(changed),
        "drifted": bool(added or removed or changed or old.name != newer.name),
    }
