"""Fixed costs: the CPU seconds a process pays before (and besides) its episodes.

Each figure is measured in fresh subprocesses (user + system CPU of the child, from
`getrusage(RUSAGE_CHILDREN)`, so a loaded machine moves it little), the median of `--rounds`:

- `python -c pass`, the interpreter's own start (the floor of every other figure);
- `mcpsim --help`;
- `import inflect` and `import mcpsim.grading` (which loads inflect's engine);
- `mcpsim.tasks.load_tasks("retail")`: the whole process, and the call alone;
- `mcpsim run retail --agent oracle` on 24 retail tasks (template cache warm), the whole process,
  against the CPU of the same 24 episodes alone: run twice through `run_episodes` in one process,
  the second run timed (templates, gold replays and imports already paid).

    python benchmarks/fixed_costs.py [--rounds N] [--label before|after] [--json PATH] [--tree DIR]

The figures go under `--label` in the JSON file (default `benchmarks/results/fixed-costs.json`),
beside any other label already there, with the machine's load average at the time. `--tree`
measures another copy of the source (its `mcpsim` package first on the children's path, as
`benchmarks/compare.py` does), e.g. the code before a change.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.common import loadavg, median

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "fixed-costs.json"
TASKS = 24

_LOAD_TASKS = """
import json, time
from mcpsim.tasks import load_tasks
cpu = time.process_time()
tasks = load_tasks("retail").tasks
print(json.dumps({"call_s": time.process_time() - cpu, "tasks": len(tasks)}))
"""

_TASK_IDS = """
import json
from mcpsim.tasks import load_tasks
print(json.dumps([t.id for t in load_tasks("retail").tasks]))
"""

_EPISODES = """
import json, sys, tempfile, time
from pathlib import Path
import anyio
from mcpsim.engine import TemplateCache
from mcpsim.runner import InProcessBackend, RunConfig, ScriptedUser, make_agent, run_episodes
from mcpsim.serve import EpisodeManager
from mcpsim.tasks import load_tasks

ids = sys.argv[1].split(",")
tasks = [t for t in load_tasks("retail").tasks if t.id in ids]
templates = TemplateCache(Path(sys.argv[2]))

async def once():
    backend = InProcessBackend(EpisodeManager(templates, max_episodes=40, ttl_seconds=None))
    with tempfile.TemporaryDirectory() as out:
        config = RunConfig(world="retail", tasks=tasks, out=Path(out))
        cpu = time.process_time()
        result = await run_episodes(config, backend, lambda: make_agent("oracle"), ScriptedUser)
        return time.process_time() - cpu, result.ran, result.summary.pass_at_1

first = anyio.run(once)
second = anyio.run(once)
print(json.dumps({"first_s": first[0], "episodes_s": second[0], "episodes": second[1], "pass_at_1": second[2]}))
"""


TREE = ROOT  # the source tree the children import `mcpsim` from (`--tree`)


def child_cpu(argv: list[str]) -> tuple[float, str]:
    """CPU seconds (user + system) of a child process and what it printed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TREE), os.environ.get("PYTHONPATH")]))}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, cwd=TREE, env=env, capture_output=True, text=True, timeout=1800, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:4]} failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout


def _last_json(out: str) -> Any:
    """The JSON line a child printed last (the runner may print before it)."""
    return json.loads(out.strip().splitlines()[-1])


def _py(code: str, *args: str) -> list[str]:
    return [sys.executable, "-c", code, *args]


def measure(rounds: int, task_ids: list[str]) -> dict[str, Any]:
    mcpsim = [sys.executable, "-m", "mcpsim"]
    samples: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        samples.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory(prefix="fixed-costs-") as scratch:
        cache = Path(scratch) / "templates"
        run = [*mcpsim, "run", "retail", "--agent", "oracle", "--tasks", ",".join(task_ids), "--cache-dir", str(cache)]
        child_cpu([*run, "--out", str(Path(scratch) / "warm")])  # builds the templates: not counted
        for r in range(rounds):
            print(f"  round {r + 1}/{rounds}", file=sys.stderr, flush=True)
            add("python_start_s", child_cpu(_py("pass"))[0])
            add("help_s", child_cpu([*mcpsim, "--help"])[0])
            add("import_inflect_s", child_cpu(_py("import inflect"))[0])
            add("import_grading_s", child_cpu(_py("import mcpsim.grading"))[0])
            cpu, out = child_cpu(_py(_LOAD_TASKS))
            add("load_tasks_process_s", cpu)
            add("load_tasks_call_s", _last_json(out)["call_s"])
            add("run_process_s", child_cpu([*run, "--out", str(Path(scratch) / f"run-{r}")])[0])
            cpu, out = child_cpu(_py(_EPISODES, ",".join(task_ids), str(cache)))
            episodes = _last_json(out)
            if episodes["episodes"] != len(task_ids) or episodes["pass_at_1"] != 1.0:
                raise RuntimeError(f"the oracle episodes did not all pass: {episodes}")
            add("episodes_alone_s", episodes["episodes_s"])
    figures = {name: round(median(values), 3) for name, values in samples.items()}
    figures["run_over_episodes"] = round(figures["run_process_s"] / figures["episodes_alone_s"], 2)
    return {"figures": figures, "samples": {k: [round(v, 3) for v in vs] for k, vs in samples.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--label", default="after")
    parser.add_argument("--json", type=Path, default=RESULT)
    parser.add_argument("--tree", type=Path, default=ROOT)
    args = parser.parse_args()
    global TREE
    TREE = args.tree.resolve()
    previous: dict[str, Any] = json.loads(args.json.read_text()) if args.json.exists() else {}
    task_ids = previous.get("task_ids") or _last_json(child_cpu(_py(_TASK_IDS))[1])[:TASKS]
    load_before = loadavg()
    result = measure(args.rounds, task_ids)
    result["load_average"] = {"start": load_before, "end": loadavg()}
    result["cores"] = os.cpu_count()
    result["tree"] = "this checkout" if TREE == ROOT else str(TREE)
    report = {**previous, "task_ids": task_ids, args.label: result}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(result["figures"], indent=2))


if __name__ == "__main__":
    main()
