"""`python -m mcpsim.factory serve|hash|validate|schema`: a spec file's world served over stdio, its
template hash and generated tasks' digest, its validation report, or the spec's JSON Schema (`-`: stdin)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import yaml

from mcpsim import logs
from mcpsim.engine.episode import Episode
from mcpsim.engine.templates import TemplateCache
from mcpsim.factory.compiler import compile_spec
from mcpsim.factory.spec import SpecError, WorldSpec, json_schema, load_spec, parse_spec
from mcpsim.factory.taskgen import generate_tasks
from mcpsim.factory.validate import tasks_digest, validate


def read_spec(source: str) -> WorldSpec:
    if source != "-":
        return load_spec(source)
    data: Any = yaml.safe_load(sys.stdin.read())
    if not isinstance(data, dict):
        raise SpecError("stdin: a spec is a mapping")
    return parse_spec(data, source="stdin")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcpsim.factory")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("serve", "hash", "validate"):
        sub = commands.add_parser(name)
        sub.add_argument("spec", help="a YAML or JSON spec file, or - for stdin")
        sub.add_argument("--seed", type=int, default=0)
        sub.add_argument("--scale", default="small")
        sub.add_argument("--tasks", type=int, default=None, help="tasks to generate (default: the spec's)")
    commands.add_parser("schema")
    args = parser.parse_args(argv)
    logs.configure("WARNING")  # to stderr: on stdio, stdout is the MCP channel
    if args.command == "schema":
        print(json.dumps(json_schema(), indent=2))
        return 0
    try:
        compiled = compile_spec(read_spec(args.spec))
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.command == "serve":
        from mcpsim.serve.mcp import serve_stdio

        episode = Episode.create(compiled.world, args.seed, args.scale, templates=TemplateCache(None))
        serve_stdio(compiled.world, episode)
        return 0
    if args.command == "hash":
        episode = Episode.create(compiled.world, args.seed, args.scale, templates=TemplateCache(None))
        count = compiled.spec.generated_tasks if args.tasks is None else args.tasks
        tasks = generate_tasks(compiled, count=count, seed=args.seed, scale=args.scale) if count else []
        print(episode.state_hash(), tasks_digest(tasks))
        return 0
    report = validate(compiled, seed=args.seed, scale=args.scale, task_count=args.tasks)
    print(json.dumps(report.to_json(), indent=2))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
