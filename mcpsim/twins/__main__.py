"""`python -m mcpsim.twins schema|tasks|harvest|build|drift`: the twin spec's JSON Schema (the
repository's copy is `schemas/twin-spec.schema.json`); tasks for a twin spec, as `mcpsim gen
--from-mcp --tasks N` makes them (the task file on stdout, the validation report on stderr, exit 1
when it has failures); a harvest of real servers (`mcpsim.twins._harvest`); twins built offline
from a harvest's results, with their tasks and a report (`mcpsim.twins._catalogue`); or the drift
of a twin's server since the twin was made (`mcpsim.twins._drift`).

    python -m mcpsim.twins schema > schemas/twin-spec.schema.json
    python -m mcpsim.twins tasks TWIN.json [--count N] [--seed S] > TWIN.tasks.yaml
    python -m mcpsim.twins harvest LIST.json --out DIR [--retry-failed] [--only PACKAGE]
    python -m mcpsim.twins build RESULTS_DIR --out DIR [--tasks N] [--seed S] [--only PACKAGE]
    python -m mcpsim.twins drift TWIN.json NEWER   # exit 1 when the server's tools drifted
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

from mcpsim import logs
from mcpsim.twins._catalogue import CatalogueError, build_catalogue
from mcpsim.twins._drift import read_listing, schema_drift
from mcpsim.twins._harvest import harvest, load_list
from mcpsim.twins._probe import ProbeLimits
from mcpsim.twins._spec_schema import json_schema
from mcpsim.twins._tasks import twin_task_set, validate_twin_tasks
from mcpsim.twins._twin_spec import load_twin


def _tasks(args: argparse.Namespace) -> int:
    logs.configure("WARNING")
    spec = load_twin(args.twin)
    report = validate_twin_tasks(spec, count=args.count, seed=args.seed)
    tasks = twin_task_set(spec, report.tasks).files[0]
    sys.stdout.write(yaml.safe_dump(tasks.model_dump(mode="json", exclude_defaults=True), sort_keys=False))
    summary = {
        k: v for k, v in report.to_json().items() if k in ("world", "accepted", "failures", "candidates_dropped")
    }
    sys.stderr.write(json.dumps(summary | {"tasks": len(report.tasks)}) + "\n")
    return 0 if report.ok else 1


def _harvest(args: argparse.Namespace) -> int:
    entries = load_list(args.list)
    if args.only:
        entries = [e for e in entries if e.package in args.only]
    limits = ProbeLimits(wall_s=args.wall, cpu_s=args.cpu, memory_bytes=args.memory_mb * 1024**2)
    counts = harvest(entries, args.out, retry_failed=args.retry_failed, limits=limits)
    print(json.dumps(counts))
    return 0


def _build(args: argparse.Namespace) -> int:
    logs.configure("WARNING")
    try:
        report = build_catalogue(args.results, args.out, tasks=args.tasks, seed=args.seed, only=args.only)
    except CatalogueError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    print(json.dumps(report["totals"]))
    return 0


def _drift(args: argparse.Namespace) -> int:
    try:
        report = schema_drift(load_twin(args.twin), read_listing(args.newer))
    except (OSError, ValueError) as exc:  # ListingError, a twin spec that does not validate
        sys.stderr.write(f"{exc}\n")
        return 2
    sys.stdout.write(json.dumps(report, indent=2) + "\n")
    return 1 if report["drifted"] else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcpsim.twins", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("schema", help="print the twin spec's JSON Schema")
    tasks = commands.add_parser("tasks", help="generate and validate tasks for a twin spec")
    tasks.add_argument("twin", help="a twin spec (JSON), as `mcpsim gen --from-mcp` writes it")
    tasks.add_argument("--count", type=int, default=10, help="tasks to generate")
    tasks.add_argument("--seed", type=int, default=0, help="the seed of the twin's data")
    run = commands.add_parser("harvest", help="install, start and list real MCP servers (resumable)")
    run.add_argument("list", type=Path, help="the servers (JSON: {servers: [{package, registry, ...}]})")
    run.add_argument("--out", type=Path, required=True, help="where each server's outcome is written")
    run.add_argument("--retry-failed", action="store_true", help="try servers that failed before again")
    run.add_argument("--only", action="append", help="harvest only this package (repeatable)")
    run.add_argument("--wall", type=float, default=60.0, help="seconds a server has to list its tools")
    run.add_argument("--cpu", type=int, default=60, help="CPU seconds a server may use")
    run.add_argument("--memory-mb", type=int, default=2048, help="a server's address space, in MiB")
    build = commands.add_parser("build", help="twins, tasks and a report from a harvest's results (offline)")
    build.add_argument("results", type=Path, help="a harvest's results folder (with its index.json)")
    build.add_argument("--out", type=Path, required=True, help="where worlds/, rejected/ and report.json go")
    build.add_argument("--tasks", type=int, default=5, choices=range(1, 101), metavar="N", help="tasks per twin")
    build.add_argument("--seed", type=int, default=0, help="the seed of the twins' data and tasks")
    build.add_argument("--only", action="append", help="rebuild only this package's twin (repeatable)")
    drift = commands.add_parser("drift", help="the tools a twin's server added, removed or changed since")
    drift.add_argument("twin", help="a twin spec (JSON)")
    drift.add_argument("newer", help="a newer listing: a harvest result, a twin spec or a recording directory")
    args = parser.parse_args(argv)
    if args.command == "drift":
        return _drift(args)
    if args.command == "harvest":
        return _harvest(args)
    if args.command == "build":
        return _build(args)
    if args.command == "schema":
        sys.stdout.write(json.dumps(json_schema(), indent=2) + "\n")
        return 0
    return _tasks(args)


if __name__ == "__main__":
    sys.exit(main())
