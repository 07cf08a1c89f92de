"""`python -m mcpsim.acceptance serve|hash|hashes|validate|schema`: a spec file's world served over
stdio, its template hash and the digest of its first candidate tasks (`hash`; `hashes` answers one
JSON request a line, for `validate.DeterminismChecker`), its validation report, or the spec's JSON
Schema (`-`: stdin). `validate` of a file runs in the sandbox (`validate_file`, which `mcpsim gen
SPEC` uses too), within the MCPSIM_COMPILE_* limits."""

from __future__ import annotations

import argparse
import json
import sys

from mcpsim import logs
from mcpsim._sandbox import CompileRefused
from mcpsim.acceptance._sandboxed import validate_file
from mcpsim.acceptance._validate import process_hashes, validate
from mcpsim.engine import Episode, TemplateCache
from mcpsim.serve import serve_stdio
from mcpsim.specs import SpecError, WorldSpec, compile_spec, json_schema, load_spec, parse_spec


def read_spec(source: str) -> WorldSpec:
    if source != "-":
        return load_spec(source)
    return parse_spec(sys.stdin.read(), source="stdin")  # the text, read within the spec's bounds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcpsim.acceptance")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("serve", "hash", "validate"):
        sub = commands.add_parser(name)
        sub.add_argument("spec", help="a YAML or JSON spec file, or - for stdin")
        sub.add_argument("--seed", type=int, default=0)
        sub.add_argument("--scale", default="small")
        if name == "hash":
            sub.add_argument("--candidates", type=int, default=0, help="candidate tasks to draw (no audit)")
        else:
            sub.add_argument("--tasks", type=int, default=None, help="tasks to generate (default: the spec's)")
    commands.add_parser("hashes", help="answer {spec, seed, scale, candidates} lines from stdin")
    commands.add_parser("schema")
    args = parser.parse_args(argv)
    logs.configure("WARNING")  # to stderr: on stdio, stdout is the MCP channel
    if args.command == "schema":
        print(json.dumps(json_schema(), indent=2))
        return 0
    if args.command == "hashes":
        return _answer_hashes()
    if args.command == "validate" and args.spec != "-":
        return _validate_file(args.spec, args.seed, args.scale, args.tasks)
    try:
        compiled = compile_spec(read_spec(args.spec))
    except SpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.command == "serve":
        episode = Episode.create(compiled.world, args.seed, args.scale, templates=TemplateCache(None))
        serve_stdio(compiled.world, episode)
        return 0
    if args.command == "hash":
        print(process_hashes(compiled.spec.model_dump(mode="json"), args.seed, args.scale, args.candidates))
        return 0
    report = validate(compiled, seed=args.seed, scale=args.scale, task_count=args.tasks)
    print(json.dumps(report.to_json(), indent=2))
    return 0 if report.ok else 1


def _validate_file(path: str, seed: int, scale: str, tasks: int | None) -> int:
    try:
        said = validate_file(path, seed=seed, scale=scale, task_count=tasks)
    except (CompileRefused, ValueError) as exc:  # past a limit, or a limit that is not one
        print(f"error: {path}: {exc}", file=sys.stderr)
        return 2
    if "error" in said:
        print(f"error: {said['error']}", file=sys.stderr)
        return 2
    print(json.dumps(said["report"], indent=2))
    return 0 if said["report"]["accepted"] else 1


def _answer_hashes() -> int:
    """One `process_hashes` answer a line for each JSON request line, until stdin closes; a
    request that fails is answered `error: ...` and the loop goes on."""
    for line in sys.stdin:
        try:
            request = json.loads(line)
            answer = process_hashes(request["spec"], request["seed"], request["scale"], request["candidates"])
        except Exception as exc:  # any failure is the answer: the caller counts it against the world
            answer = f"error: {type(exc).__name__}: {exc}"
        print(answer.replace("\n", " "), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
