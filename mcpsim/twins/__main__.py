"""`python -m mcpsim.twins schema|tasks`: the twin spec's JSON Schema (the repository's copy is
`schemas/twin-spec.schema.json`), or tasks for a twin spec, as `mcpsim gen --from-mcp --tasks N`
makes them: the task file on stdout, the validation report on stderr, exit 1 when it has failures.

    python -m mcpsim.twins schema > schemas/twin-spec.schema.json
    python -m mcpsim.twins tasks TWIN.json [--count N] [--seed S] > TWIN.tasks.yaml
"""

from __future__ import annotations

import argparse
import json
import sys

import yaml

from mcpsim import logs
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcpsim.twins", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("schema", help="print the twin spec's JSON Schema")
    tasks = commands.add_parser("tasks", help="generate and validate tasks for a twin spec")
    tasks.add_argument("twin", help="a twin spec (JSON), as `mcpsim gen --from-mcp` writes it")
    tasks.add_argument("--count", type=int, default=10, help="tasks to generate")
    tasks.add_argument("--seed", type=int, default=0, help="the seed of the twin's data")
    args = parser.parse_args(argv)
    if args.command == "schema":
        sys.stdout.write(json.dumps(json_schema(), indent=2) + "\n")
        return 0
    return _tasks(args)


if __name__ == "__main__":
    sys.exit(main())
