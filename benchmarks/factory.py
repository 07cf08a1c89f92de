"""The catalogue run's time and peak memory on this machine (a benchmark, not a test):

    python -m benchmarks.factory --count 1000 --seed 0 --out /tmp/catalogue [--workers N] [--tasks 10]

runs `mcpsim.catalogue._run.run_catalogue` (every check, tasks included) and samples the
resident memory of this process and its pool workers twice a second. It prints one JSON object
(and writes it to `--result`, default benchmarks/results/factory-<count>.json): the catalogue's
report (worlds, tools, tasks, rejections per check, task lengths, distinctness, and `diversity`:
the overlap of action structure within and across families and the share of near-duplicate
tasks), wall seconds, seconds per accepted world, the CPU seconds of the whole process tree (this
process, the pool's workers and the processes they start, all waited for when the pool ends) in
all, per world drawn and per accepted world, the peak resident memory of the whole process tree
and of the largest single process, the machine's cores and its load (a loaded machine's cores
run slower). A run stopped part-way resumes from `--out`, so a long run can be done in pieces;
`resumed` in the report says how many worlds came from earlier pieces (their time is in neither
`seconds` nor the CPU figures)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import threading
import time
from pathlib import Path
from typing import Any

from mcpsim import logs
from mcpsim.catalogue import run_catalogue

RESULTS = Path(__file__).with_name("results")


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _tree(pid: int) -> list[int]:
    pending, seen = [pid], []
    while pending:
        current = pending.pop()
        seen.append(current)
        pending += _children(current)
    return seen


class MemorySampler(threading.Thread):
    """The peak resident memory of this process tree, sampled every `interval` seconds."""

    def __init__(self, interval: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.peak_total = 0
        self.peak_single = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            sizes = [_rss(p) for p in _tree(os.getpid())]
            self.peak_total = max(self.peak_total, sum(sizes))
            self.peak_single = max(self.peak_single, max(sizes, default=0))
            self.stop.wait(self.interval)


def _cpu_seconds() -> float:
    """CPU seconds (user and system) of this process and of its children that have ended."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.factory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="the catalogue's output directory (reused: resumable)")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--result", default=None, help="where to write the figures (JSON)")
    args = parser.parse_args(argv)
    logs.configure("WARNING")
    sampler = MemorySampler()
    sampler.start()
    started = time.perf_counter()
    cpu_started = _cpu_seconds()
    load_at_start = os.getloadavg()
    done = [0]

    def progress(result: Any, accepted: int) -> None:
        done[0] += 1
        if done[0] % 10 == 0:
            print(f"{done[0]} drawn, {accepted} accepted, {time.perf_counter() - started:.0f} s", flush=True)

    report = run_catalogue(
        args.out, args.count, args.seed, workers=args.workers, task_count=args.tasks, progress=progress
    )
    seconds = time.perf_counter() - started
    cpu = _cpu_seconds() - cpu_started  # the pool has ended: its workers (and their checkers) were waited for
    sampler.stop.set()
    sampler.join()
    fresh = max(report.worlds - report.resumed, 1)
    figures = {
        "report": report.to_json(),
        "wall_seconds": round(seconds, 1),
        "seconds_per_world": round(seconds / fresh, 2),
        "cpu_seconds": round(cpu, 1),
        "cpu_seconds_per_world": round(cpu / fresh, 2),
        "cpu_seconds_per_drawn_world": round(cpu / max(report.drawn - report.resumed, 1), 2),
        "peak_rss_total_mb": round(sampler.peak_total / 2**20, 1),
        "peak_rss_largest_process_mb": round(sampler.peak_single / 2**20, 1),
        "cores": len(os.sched_getaffinity(0)),
        "load_average_at_start": load_at_start,
        "load_average_at_end": os.getloadavg(),
        "tasks_per_world": args.tasks,
    }
    target = Path(args.result) if args.result else RESULTS / f"factory-{args.count}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))
    return figures


if __name__ == "__main__":
    main()
