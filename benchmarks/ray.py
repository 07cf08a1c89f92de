"""Throughput of `mcpsim run --executor ray` on one worker node and on two, as a ratio, in one
run: a local Ray cluster (`LocalCluster`: a head with no CPU for episodes, two worker nodes of
one CPU each, on loopback), the oracle on a mix of retail tasks, the same episodes on one host and
then on two. Not a test: it is timed, and the machine may be shared.

    .venv/bin/python benchmarks/ray.py [--episodes N]   # writes benchmarks/results/ray.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: `import ray` must not find this file, `benchmarks` must be found
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.append(str(Path(__file__).resolve().parents[1]))

import anyio

from benchmarks.common import loadavg, machine_info, quiet_logs

RESULTS = Path(__file__).resolve().parent / "results" / "ray.json"
TASKS = ["gift-card-balance", "add-address-make-default", "cancel-pending-order", "set-default-saved-address"]


def measure(episodes: int) -> dict[str, object]:
    from mcpsim.runner import LocalCluster, RunConfig, run_on_ray
    from mcpsim.tasks import load_tasks

    retail = load_tasks("retail")
    tasks = [retail.get(t) for t in TASKS]
    trials = max(1, episodes // len(tasks))
    rows: dict[int, dict[str, float]] = {}
    with LocalCluster.start(workers=2, head_cpus=0) as cluster, tempfile.TemporaryDirectory() as tmp:
        for hosts in (1, 2, 1, 2):  # each twice, interleaved: the second round has warm workers' caches
            config = RunConfig(
                world="retail",
                tasks=tasks,
                out=Path(tmp) / f"{hosts}-{len(rows)}-{time.monotonic_ns()}",
                trials=trials,
                concurrency=2 * hosts,
                address=cluster.address,
            )
            started = time.perf_counter()
            result = anyio.run(lambda config=config, hosts=hosts: run_on_ray(config, hosts=hosts))
            elapsed = time.perf_counter() - started  # with the hosts' start, as a run pays it
            assert result.summary.pass_at_1 == 1.0, result.summary
            rows[hosts] = {
                "episodes": result.ran,
                "seconds": round(elapsed, 2),
                "per_s": round(result.ran / elapsed, 3),
            }
    return {
        "episodes": trials * len(tasks),
        "one_worker": rows[1],
        "two_workers": rows[2],
        "ratio": round(rows[2]["per_s"] / rows[1]["per_s"], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=24)
    args = parser.parse_args()
    quiet_logs()
    report = {"machine": machine_info(), "load_before": loadavg(), **measure(args.episodes), "load_after": loadavg()}
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
