"""stdio start-up: from launching a server process to its answer to `initialize`, for
`mcpsim serve retail --scale small` (template and world card cached on disk) and for a bare MCP
SDK server (`benchmarks/bare_server.py`), launched alternately round after round. The figure is
the ratio of medians (target: at most 1.3), also paired round by round; absolute times move with
the machine's load. Also reported: the time to the answer to the first `tools/list` (mcpsim
answers `initialize` while it loads its world, so its first tool request waits for the world).

A section of the suite (`run(ctx)`), and a script of its own:

    python benchmarks/startup.py [--rounds N]     # prints the section's JSON
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.common import Interleaved, rotations

HERE = Path(__file__).resolve().parent
TARGET_RATIO = 1.3
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def commands(cache_dir: Path) -> dict[str, list[str]]:
    return {
        "bare_sdk": [sys.executable, str(HERE / "bare_server.py")],
        "mcpsim": [
            *(sys.executable, "-m", "mcpsim", "serve", "retail", "--scale", "small"),
            *("--cache-dir", str(cache_dir), "--log-level", "WARNING"),
        ],
    }


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used so far (Linux /proc; 0.0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_to_initialize(argv: list[str], timeout: float = 300.0) -> tuple[float, float, float]:
    """Seconds from launching `argv` to the first line it writes on stdout (the answer to the
    `initialize` request already waiting on its stdin), the CPU seconds it used until then (less
    sensitive to other processes' load than the wall time), and the seconds to its answer to the
    `tools/list` sent next (mcpsim loads its world meanwhile: the first tool call waits for it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSIM_")}
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(INITIALIZE) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        elapsed = time.perf_counter() - start
        cpu = _cpu_seconds(proc.pid)
        if '"result"' not in line:
            raise RuntimeError(f"{argv[1:]} did not answer initialize: {line[:200]!r}")
        proc.stdin.write(json.dumps(INITIALIZED) + "\n" + json.dumps(TOOLS_LIST) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if '"tools"' not in line:
            raise RuntimeError(f"{argv[1:]} did not answer tools/list: {line[:200]!r}")
        return elapsed, cpu, time.perf_counter() - start
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]


def measure(rounds: int, cache_dir: Path) -> dict[str, Any]:
    argvs = commands(cache_dir)
    time_to_initialize(argvs["mcpsim"])  # builds the template and the world's card into the cache: later runs load them
    wall, cpu, tools = Interleaved(), Interleaved(), Interleaved()
    for order in rotations(list(argvs), rounds):
        for name in order:
            seconds, cpu_seconds, listed = time_to_initialize(argvs[name])
            wall.add_round(name, [seconds])
            cpu.add_round(name, [cpu_seconds])
            tools.add_round(name, [listed])
    summary = wall.summary(baseline="bare_sdk")
    cpu_summary = cpu.summary(baseline="bare_sdk")
    tools_summary = tools.summary(baseline="bare_sdk")
    ratio = summary["mcpsim"]["ratio_median"]
    return {
        "rounds": rounds,
        "what": "launch to the answer to initialize over stdio, template cached; ratio = mcpsim / bare SDK server",
        "servers": summary,
        "cpu": cpu_summary,
        "first_tools_list": tools_summary,
        "ratio_median": ratio,
        "ratio_paired": summary["mcpsim"]["ratio_paired"],
        "cpu_ratio_median": cpu_summary["mcpsim"]["ratio_median"],
        "tools_list_ratio_median": tools_summary["mcpsim"]["ratio_median"],
        "target_ratio": TARGET_RATIO,
        "met": ratio is not None and ratio <= TARGET_RATIO,
    }


def run(ctx: Any) -> dict[str, Any]:
    """The suite's section: 5 rounds in --quick mode, 15 otherwise."""
    return measure(5 if ctx.quick else 15, ctx.cache_dir)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcpsim-startup-") as tmp:
        print(json.dumps(measure(args.rounds, Path(tmp)), indent=1))
