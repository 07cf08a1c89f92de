"""Task metrics of generated worlds: how long the gold solutions are and how much they chain.

python tools/task_metrics.py DIR [--per-task] [--json] [--task-files]

DIR is a catalogue folder (`mcpsim gen --catalog --out DIR`: its specs in DIR/worlds) or a folder
of spec files. Each world's tasks are read from `mcpsim tasks --world-spec SPEC NAME --json`
(the gold solution is `gold`, a list of tool calls without their results); the gold is then
replayed on the task's seeded world (its seed, scale and fault profile) to see what each call
returned. A call *depends* on an earlier one when one of its string arguments (not `limit` or
`offset`) appears in an earlier call's result and nowhere in the instruction: a value only an
earlier result shows. A task's chain depth is how many of its calls depend; it is chained when
that is at least one.

With --task-files, a catalogue folder's task files (DIR/tasks/NAME.yaml, what `mcpsim tasks` lists
for a spec in DIR/worlds) are read in this process instead: the same tasks, without a process per
world. Prints, over every task: the mean gold calls, the share of tasks with 10 calls or more, the share
with one call, the share chained; with --per-task, each task's calls and chain depth.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcpsim.engine import Episode, FaultProfile
from mcpsim.specs import compile_spec, load_spec
from mcpsim.tasks import load_task_file

PAGING = ("limit", "offset")


def world_specs(folder: Path) -> tuple[Path, list[Path]]:
    worlds = folder / "worlds" if (folder / "worlds").is_dir() else folder
    return worlds, sorted(p for p in worlds.iterdir() if p.suffix in (".yaml", ".yml", ".json"))


def world_tasks(spec: Path, name: str) -> list[dict[str, Any]]:
    """`mcpsim tasks NAME --json` with the one spec loaded (`--world-spec`: its task file
    beside it, as `--worlds-dir` finds it, without compiling every other spec of the folder)."""
    mcpsim = Path(sys.executable).with_name("mcpsim")
    out = subprocess.run(
        [str(mcpsim), "tasks", "--world-spec", str(spec), name, "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return list(json.loads(out))


def file_tasks(spec: Path, name: str) -> list[dict[str, Any]]:
    """The same tasks read from the catalogue's task file (`DIR/tasks/NAME.yaml`) in this process,
    dumped as `mcpsim tasks --json` dumps them: faster, for a catalogue folder (--task-files)."""
    written = load_task_file(spec.parent.parent / "tasks" / spec.name)
    return [t.model_dump(mode="json") for t in written.tasks]


def chain_depth(world: Any, task: dict[str, Any]) -> int:
    """How many of the gold's calls use a value only an earlier result shows."""
    faults = FaultProfile.model_validate(task["faults"]) if task.get("faults") else None
    episode = Episode.create_with_faults(world, task["seed"], task["scale"], faults, id="metrics")
    said = task["instruction"].casefold()
    seen: list[str] = []
    depth = 0
    try:
        for action in task["gold"]:
            values = [str(v) for k, v in action["args"].items() if k not in PAGING and isinstance(v, str)]
            if any(v.casefold() not in said and any(v in text for text in seen) for v in values if len(v) > 1):
                depth += 1
            result = episode.call(action["tool"], action["args"])
            seen.append(json.dumps(result.value, default=str) if result.value is not None else str(result.error))
    finally:
        episode.close()
    return depth


def measure(folder: Path, from_files: bool = False) -> list[dict[str, Any]]:
    _, specs = world_specs(folder)
    read = file_tasks if from_files else world_tasks
    rows: list[dict[str, Any]] = []
    for path in specs:
        if from_files and not (path.parent.parent / "tasks" / path.name).is_file():
            continue  # a catalogue still being written: the worlds done so far
        compiled = compile_spec(load_spec(path))
        for task in read(path, compiled.spec.name):
            calls = len(task["gold"])
            rows.append(
                {
                    "world": compiled.spec.name,
                    "task": task["id"],
                    "calls": calls,
                    "chain_depth": chain_depth(compiled.world, task),
                }
            )
    return rows


def figures(rows: list[dict[str, Any]]) -> dict[str, float]:
    n = len(rows) or 1
    return {
        "tasks": len(rows),
        "gold_calls_mean": round(sum(r["calls"] for r in rows) / n, 2),
        "share_10_or_more": round(sum(r["calls"] >= 10 for r in rows) / n, 3),
        "share_one_call": round(sum(r["calls"] == 1 for r in rows) / n, 3),
        "share_chained": round(sum(r["chain_depth"] > 0 for r in rows) / n, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--per-task", action="store_true", help="also print each task's calls and chain depth")
    parser.add_argument("--json", action="store_true", help="print the figures (and tasks) as JSON")
    parser.add_argument(
        "--task-files", action="store_true", help="read DIR/tasks/NAME.yaml in this process (faster, the same tasks)"
    )
    args = parser.parse_args()
    rows = measure(args.folder, args.task_files)
    summary = figures(rows)
    if args.json:
        print(json.dumps({"figures": summary, **({"tasks": rows} if args.per_task else {})}, indent=2))
        return
    if args.per_task:
        for r in rows:
            print(f"{r['world']:<32} {r['task']:<44} calls {r['calls']:>3}  chain depth {r['chain_depth']:>3}")
    for key, value in summary.items():
        print(f"{key:<18} {value}")


if __name__ == "__main__":
    main()
