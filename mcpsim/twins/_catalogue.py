"""Twins from the harvest: every server a harvest listed (`mcpsim.twins._harvest`) becomes a twin
world offline, from its committed result (its `initialize` answer and its tools as it listed them;
no server is started), with audited tasks, and a report says which twins were accepted.

    python -m mcpsim.twins build benchmarks/harvest/results --out benchmarks/harvest/twins

For each server `index.json` lists as `listed`, in the order of the result files' names: the result
is read within bounds (`MAX_RESULT_BYTES`, then `_drift.read_listing`'s), the twin is inferred
(`infer_twin`), served in memory and checked (`check_twin`: every tool's input and output schema as
listed over MCP equal to the recorded ones, every tool's sample answer valid), and `tasks` tasks are
generated and audited (`validate_twin_tasks`). An accepted twin is written to `OUT/worlds/NAME.twin.json`
with its tasks beside it (`NAME.twin.tasks.yaml`, as `mcpsim gen --from-mcp --tasks` writes them), so
`--worlds-dir OUT/worlds` loads the accepted ones; a rejected twin goes to `OUT/rejected/`. NAME is
the result file's name (the harvest's slug of the registry and package).

`OUT/report.json` (sorted, no times) has each server's outcome and the totals. A result that cannot
be read or built is that server's failure, never the others'."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import yaml

from mcpsim.twins._drift import ListingError, read_listing
from mcpsim.twins._infer import infer_twin
from mcpsim.twins._surface import ServerSurface
from mcpsim.twins._tasks import twin_task_set, validate_twin_tasks
from mcpsim.twins._twin_spec import TwinSpec
from mcpsim.twins._world import check_twin

MAX_RESULT_BYTES = 8 * 1024 * 1024  # one harvest result (real ones are under 200 KB)
MAX_INDEX_BYTES = 8 * 1024 * 1024
MAX_REASON = 300  # characters of a failure's reason kept in the report
CHECKS = ("read", "build", "schemas", "answers", "tasks")  # what rejects a server, in the order they run
WORLDS, REJECTED, REPORT = "worlds", "rejected", "report.json"
FILE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*\.json$")


class CatalogueError(ValueError):
    """The harvest's index cannot be read: nothing can be built."""


@dataclass(frozen=True)
class Harvested:
    """A server the harvest's index lists as listed: its result file and what the index says of it."""

    file: str
    package: str
    registry: str
    version: str

    @property
    def name(self) -> str:
        return self.file.removesuffix(".json")


def listed_servers(results: Path) -> tuple[list[Harvested], list[dict[str, Any]]]:
    """The listed servers of `results/index.json`, in file-name order, and a failure entry for
    each row that does not name a result file of that folder."""
    index = results / "index.json"
    try:
        size = index.stat().st_size
        if size > MAX_INDEX_BYTES:
            raise CatalogueError(f"{index}: {size:,} bytes, the limit is {MAX_INDEX_BYTES:,}")
        data = json.loads(index.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CatalogueError(f"{index}: {exc.strerror}") from None
    except (ValueError, RecursionError) as exc:
        raise CatalogueError(f"{index}: not JSON ({str(exc)[:200]})") from None
    rows = data.get("results") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise CatalogueError(f"{index}: no `results` list (is it a harvest's index.json?)")
    found: dict[str, Harvested] = {}
    bad: list[dict[str, Any]] = []
    for n, row in enumerate(rows):
        if not isinstance(row, dict) or row.get("outcome") != "listed":
            continue
        fields = [row.get(k) for k in ("file", "package", "registry")]
        if not all(isinstance(v, str) and v for v in fields) or not FILE_NAME.match(str(row["file"])):
            bad.append(_failed({"name": f"index-row-{n}"}, "read", f"index.json results[{n}] names no result file"))
            continue
        version = row.get("version")
        found[row["file"]] = Harvested(row["file"], row["package"], row["registry"], str(version or ""))
    return [found[f] for f in sorted(found)], bad


def _failed(entry: dict[str, Any], check: str, reason: str) -> dict[str, Any]:
    return entry | {"outcome": "rejected", "rejected_by": [check], "reason": reason[:MAX_REASON]}


def _surface(server: Harvested, results: Path) -> ServerSurface:
    """What the server showed the harvest, as `read_surface` reads it from a live server."""
    path = results / server.file
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ListingError(f"{server.file}: {exc.strerror}") from None
    if size > MAX_RESULT_BYTES:
        raise ListingError(f"{server.file}: {size:,} bytes, the limit is {MAX_RESULT_BYTES:,}")
    try:
        listing = read_listing(path)
    except ListingError as exc:  # its message names the file by its full path: name it by its name
        raise ListingError(str(exc).replace(str(path), server.file)) from None
    source = f"harvest {server.registry}:{server.package}" + (f"@{server.version}" if server.version else "")
    return ServerSurface(listing.name, listing.version, listing.instructions, listing.tools, [], source)


def unservable(tools: list[dict[str, Any]]) -> list[str]:
    """The tools whose recorded schemas MCP cannot list verbatim: the protocol's `Tool` wants an
    input schema, and any output schema, with `"type": "object"` at its root (a real server that
    broke this was listed by a lenient client; the SDK's server refuses to list it)."""
    bad = []
    for tool in tools:
        schemas = [tool.get("inputSchema"), *([tool["outputSchema"]] if tool.get("outputSchema") is not None else [])]
        if not all(isinstance(s, dict) and s.get("type") == "object" for s in schemas):
            bad.append(str(tool["name"]))
    return sorted(bad)


def _leaf(exc: BaseException) -> BaseException:
    """The first exception an exception group holds (an event loop's task group wraps them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _unique(spec: TwinSpec, server: Harvested, taken: set[str]) -> TwinSpec:
    """The twin, renamed if another server's twin has its world name (a suffix from its file's name)."""
    if spec.name not in taken:
        return spec
    suffix = hashlib.sha256(server.name.encode()).hexdigest()[:8]
    return spec.model_copy(update={"name": f"{spec.name[:31]}_{suffix}"})


def _checked(check: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The schema and answer figures of `check_twin`'s report, and the checks they fail."""
    differ = set(check["schema_differs"]) | set(check["output_schema_differs"]) | set(check["missing"])
    bad_answers = {
        name: (a.get("error") or a.get("schema_problem") or "")[:MAX_REASON]
        for name, a in sorted(check["answers"].items())
        if a["is_error"] or a["schema_problem"] is not None
    }
    figures = {
        "tools": check["tools"],
        "schemas_equal": check["tools"] - len(differ),
        "input_schemas_equal": check["schemas_equal"],
        "output_schemas_equal": check["output_schemas_equal"],
        "schema_differs": sorted(differ),
        "answers_ok": check["answers_ok"],
        "answer_failures": bad_answers,
        "operations": dict(sorted(Counter(check["operations"].values()).items())),
        "entities": len(check["entities"]),
    }
    failed = [c for c, bad in (("schemas", differ), ("answers", bad_answers)) if bad]
    return figures, failed


def _write_twin(spec: TwinSpec, folder: Path, name: str, tasks: dict[str, Any] | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.twin.json").write_text(spec.model_dump_json(indent=2) + "\n", encoding="utf-8")
    if tasks is not None:
        text = yaml.safe_dump(tasks, sort_keys=False, allow_unicode=True)
        (folder / f"{name}.twin.tasks.yaml").write_text(text, encoding="utf-8")


def _remove_twin(out: Path, name: str) -> None:
    for folder in (WORLDS, REJECTED):
        for suffix in (".twin.json", ".twin.tasks.yaml"):
            (out / folder / f"{name}{suffix}").unlink(missing_ok=True)


def build_twin(
    server: Harvested, results: Path, out: Path, *, tasks: int, seed: int, taken: set[str]
) -> dict[str, Any]:
    """Build, check and write one server's twin; its report entry (never raises for its input)."""
    entry: dict[str, Any] = {
        "name": server.name,
        "package": server.package,
        "registry": server.registry,
        "version": server.version,
    }
    _remove_twin(out, server.name)
    try:
        surface = _surface(server, results)
    except ListingError as exc:
        return _failed(entry, "read", str(exc))
    entry["server"] = {"name": surface.name, "version": surface.version}
    if bad := unservable(surface.tools):
        why = f"{len(bad)} tools' schemas have no `type: object` at the root, which MCP cannot list: {', '.join(bad)}"
        unserved = {"tools": len(surface.tools), "schemas_equal": 0, "schema_differs": bad}  # none was served
        return _failed(entry | unserved, "schemas", why)
    try:
        spec = _unique(infer_twin(surface), server, taken)
        check = anyio.run(lambda: check_twin(spec, surface.tools, seed=seed))
        report = validate_twin_tasks(spec, count=tasks, seed=seed)
    except Exception as exc:  # untrusted schemas may break the inference in ways nobody foresaw
        leaf = _leaf(exc)
        return _failed(entry | {"tools": len(surface.tools)}, "build", f"{type(leaf).__name__}: {leaf}")
    taken.add(spec.name)
    figures, failed = _checked(check)
    failures = {k: sorted(v) for k, v in sorted(report.failures.items()) if v}
    entry |= {"world": spec.name} | figures
    entry["tasks"] = {
        "asked": tasks,
        "kept": len(report.tasks),
        "candidates_dropped": dict(sorted(report.dropped.items())),
        "failures": failures,
    }
    if not report.tasks or set(failures) - {"tasks_generated"}:
        failed.append("tasks")
    task_file = None
    if report.tasks:
        task_file = twin_task_set(spec, report.tasks).files[0].model_dump(mode="json", exclude_defaults=True)
    if failed:
        said = {
            "schemas": "schemas differ when served",
            "answers": "answers fail",
            "tasks": "tasks fail validation" if report.tasks else "no sound task",
        }
        entry |= {"outcome": "rejected", "rejected_by": failed, "reason": "; ".join(said[c] for c in failed)}
    else:
        entry["outcome"] = "accepted"
    _write_twin(spec, out / (REJECTED if failed else WORLDS), server.name, task_file)
    return entry


def _totals(entries: list[dict[str, Any]]) -> dict[str, Any]:
    accepted = [e for e in entries if e["outcome"] == "accepted"]
    rejected_by = Counter(c for e in entries for c in e.get("rejected_by", []))
    return {
        "servers": len(entries),
        "tools": sum(e.get("tools", 0) for e in entries),
        "schemas_equal": sum(e.get("schemas_equal", 0) for e in entries),
        "accepted": len(accepted),
        "accepted_tools": sum(e["tools"] for e in accepted),
        "rejected": len(entries) - len(accepted),
        "rejected_by_check": {c: rejected_by[c] for c in CHECKS if rejected_by[c]},
        "tasks_kept": sum(e.get("tasks", {}).get("kept", 0) for e in entries),
    }


def _earlier(out: Path) -> list[dict[str, Any]]:
    """The servers of an earlier report in `out`, if one is there and readable (for `--only`)."""
    try:
        data = json.loads((out / REPORT).read_text(encoding="utf-8"))
        servers = data["servers"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [s for s in servers if isinstance(s, dict) and isinstance(s.get("name"), str) and "outcome" in s]


def build_catalogue(
    results: Path,
    out: Path,
    *,
    tasks: int = 5,
    seed: int = 0,
    only: list[str] | None = None,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Build every listed server's twin (or only those of the packages in `only`, keeping the
    other servers' entries of an earlier report) and write `out/report.json`; the report."""
    servers, bad = listed_servers(results)
    out.mkdir(parents=True, exist_ok=True)
    kept: dict[str, dict[str, Any]] = {}
    if only is not None:
        servers = [s for s in servers if s.package in only]
        rebuilt = {s.name for s in servers}
        kept = {e["name"]: e for e in _earlier(out) if e["name"] not in rebuilt}
        bad = []
    taken = {str(e["world"]) for e in kept.values() if "world" in e}
    for server in servers:
        entry = build_twin(server, results, out, tasks=tasks, seed=seed, taken=taken)
        kept[server.name] = entry
        found = f"{entry.get('tools', 0)} tools, {entry.get('tasks', {}).get('kept', 0)} tasks"
        say(f"{entry['outcome']} {server.package}: {found}" + (f" ({entry['reason']})" if "reason" in entry else ""))
    for entry in bad:
        kept[entry["name"]] = entry
    entries = [kept[name] for name in sorted(kept)]
    report = {"tasks_asked": tasks, "seed": seed, "totals": _totals(entries), "servers": entries}
    (out / REPORT).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return report
