"""Issue 15's targets, each in bare no-op calls of CPU measured in this section's own run (the
bare MCP SDK server of `bare_server.py`, with one async no-op tool): so they hold on any machine.

- graded oracle episodes through `run_episodes` (what `mcpsim run` runs), in process and over
  HTTP: process CPU per episode (both ends in this process), in no-op calls of the same transport;
  and episodes per CPU-second at concurrency 1 to 256;
- retail's read tools through `Episode.call` (every read call of the retail tasks' gold
  solutions, replayed on task episodes): CPU per call, in in-memory no-op calls; and the same
  tools through MCP in memory against 1.25 x (no-op + that cost);
- reset: `task_episode` (an episode of a task, ready for its first call), median CPU, at the
  default and the large scale; with its first call, apart;
- the idle-episode store: TOTAL live episodes of which ACTIVE open, in a fresh process
  (`idle_probe.py`): RSS, bytes per parked episode, park and rebuild CPU, state hashes.
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

import anyio

from benchmarks.common import median
from benchmarks.context import Context

IDLE_PROBE = Path(__file__).with_name("idle_probe.py")
CONCURRENCY = (1, 16, 64, 256)
MIN_TRIALS = 4  # each task at least this many times per level: a run of 16 episodes is too short to compare
REPEATS = 3  # sweeps over the levels; each level's figures are the median run's


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median CPU per episode, with the episodes and errors of all of them."""
    ordered = sorted(runs, key=lambda r: r["cpu_ms_per_episode"])
    middle = dict(ordered[(len(ordered) - 1) // 2])
    middle["repeats"] = len(runs)
    middle["episodes"] = sum(r["episodes"] for r in runs)
    middle["errors"] = sum(r["errors"] for r in runs)
    middle["pass_at_1"] = min(r["pass_at_1"] for r in runs)
    return middle


async def _noop_cpu(client: Any, n: int) -> float:
    """Median process CPU seconds of one bare no-op call."""
    samples = []
    for _ in range(n):
        c = time.process_time()
        await client.call_tool("noop", {})
        samples.append(time.process_time() - c)
    return median(samples)


async def _episodes(ctx: Context, backend: Any, tasks: list[Any], trials: int, concurrency: int) -> dict[str, Any]:
    from mcpsim.runner import RunConfig, ScriptedUser, make_agent, run_episodes

    with tempfile.TemporaryDirectory(dir=ctx.scratch, prefix="run-") as out:
        config = RunConfig(world="retail", tasks=tasks, out=Path(out), trials=trials, concurrency=concurrency)
        cpu = time.process_time()
        result = await run_episodes(config, backend, lambda: make_agent("oracle"), ScriptedUser)
        cpu = time.process_time() - cpu
    return {
        "episodes": result.ran,
        "cpu_s": round(cpu, 3),
        "cpu_ms_per_episode": round(cpu / max(1, result.ran) * 1e3, 2),
        "episodes_per_cpu_s": round(result.ran / cpu, 2) if cpu else None,
        "pass_at_1": result.summary.pass_at_1,
        "errors": result.summary.errors,
    }


def _graded(ctx: Context) -> dict[str, Any]:
    from mcp import Client

    from benchmarks.bare_server import build_bare_server
    from mcpsim.runner import HttpBackend, InProcessBackend
    from mcpsim.serve import EpisodeManager, serve_in_thread
    from mcpsim.tasks import load_tasks

    tasks = load_tasks("retail").tasks[: 3 if ctx.quick else 16]
    levels = (1,) if ctx.quick else CONCURRENCY
    repeats = 1 if ctx.quick else REPEATS
    cap = max(levels) * 2 + 8
    noop_n = 50 if ctx.quick else 400
    bare_app = build_bare_server().streamable_http_app(json_response=True)
    app = ctx.retail_app(cap)
    with serve_in_thread(app) as url, serve_in_thread(bare_app) as bare_url:

        async def main() -> dict[str, Any]:
            backends = {
                "in-process": InProcessBackend(EpisodeManager(ctx.templates, max_episodes=cap, ttl_seconds=None)),
                "http": HttpBackend(url, "bench"),
            }
            noop: dict[str, list[float]] = {"in-process": [], "http": []}
            runs: list[dict[str, Any]] = []
            try:
                async with Client(build_bare_server()) as mem, Client(f"{bare_url}/mcp") as http:
                    for backend in backends.values():  # task templates, gold replays, imports: not timed
                        await _episodes(ctx, backend, tasks, 1, min(8, len(tasks)))
                    samples: dict[tuple[str, int], list[dict[str, Any]]] = {}
                    for rep in range(repeats):  # whole sweeps, so that drifting load hits every level alike
                        for c in levels:
                            for name, backend in backends.items():
                                if name == "http" and c > 64:
                                    continue  # one client per episode over real sockets: 64 shows the trend
                                noop[name].append(await _noop_cpu(mem if name == "in-process" else http, noop_n))
                                trials = max(1 if ctx.quick else MIN_TRIALS, c // len(tasks))
                                print(
                                    f"  graded episodes ({rep + 1}/{repeats}): {name}, concurrency {c},"
                                    f" {trials * len(tasks)} episodes",
                                    flush=True,
                                )
                                run = await _episodes(ctx, backend, tasks, trials, c)
                                samples.setdefault((name, c), []).append(run)
                                noop[name].append(await _noop_cpu(mem if name == "in-process" else http, noop_n))
                    for (name, c), done in samples.items():
                        runs.append({"backend": name, "concurrency": c, **_median_run(done)})
            finally:
                await backends["http"].aclose()
            noop_ms = {k: round(median(v) * 1e3, 4) for k, v in noop.items() if v}
            for run in runs:  # the unit: the in-memory no-op (the peers run in process)
                run["noop_cpu_ms"] = noop_ms["in-process"]
                run["noop_calls_per_episode"] = round(run["cpu_ms_per_episode"] / noop_ms["in-process"], 1)
                run["transport_noop_cpu_ms"] = noop_ms[run["backend"]]
                run["transport_noop_calls_per_episode"] = round(run["cpu_ms_per_episode"] / noop_ms[run["backend"]], 1)
            return {"tasks": len(tasks), "noop_cpu_ms": noop_ms, "runs": runs}

        return anyio.run(main)


def _reads(ctx: Context) -> dict[str, Any]:
    """Every read call of the retail gold solutions, through Episode.call and through MCP in memory."""
    from mcp import Client

    from benchmarks.bare_server import build_bare_server
    from mcpsim.serve import build_server
    from mcpsim.tasks import load_tasks, task_episode

    world = ctx.worlds["retail"]
    tasks = load_tasks("retail").tasks[: 3 if ctx.quick else 40]
    calls = [
        (task, a.tool, a.args)
        for task in tasks
        for a in task.gold
        if a.tool in world.tools and world.tools[a.tool].read_only and a.expect == "ok"
    ]
    rounds = 2 if ctx.quick else 10
    direct: dict[str, list[float]] = {}
    mcp: dict[str, list[float]] = {}
    noop: list[float] = []

    async def main() -> None:
        episodes = {task.id: task_episode(world, task, templates=ctx.templates) for task, _, _ in calls}
        try:
            async with (
                Client(build_bare_server()) as bare,
                Client(build_server(world, lambda episode_id: episodes[episode_id or ""])) as sim,
            ):
                from mcpsim.serve import META_EPISODE

                # In blocks, not call by call: an in-memory MCP call's tail (the server task
                # finishing its request) runs during the next await, which would charge it to
                # whatever is timed next.
                for r in range(rounds + 1):
                    for task, tool, args in calls:
                        c = time.process_time()
                        episodes[task.id].call(tool, args)
                        if r:  # the first round warms every statement cache
                            direct.setdefault(tool, []).append(time.process_time() - c)
                    for task, tool, args in calls:
                        c = time.process_time()
                        await sim.call_tool(tool, args, meta={META_EPISODE: task.id})  # type: ignore[arg-type]
                        if r:
                            mcp.setdefault(tool, []).append(time.process_time() - c)
                    for _ in calls:
                        c = time.process_time()
                        await bare.call_tool("noop", {})
                        if r:
                            noop.append(time.process_time() - c)
        finally:
            for episode in episodes.values():
                episode.close()

    anyio.run(main)
    noop_ms = median(noop) * 1e3
    tools = []
    for tool in sorted(direct):
        d, m = median(direct[tool]) * 1e3, median(mcp[tool]) * 1e3
        tools.append(
            {
                "tool": tool,
                "n": len(direct[tool]),
                "direct_cpu_ms": round(d, 4),
                "direct_noop_calls": round(d / noop_ms, 2),
                "mcp_cpu_ms": round(m, 4),
                "mcp_over_noop_plus_direct": round(m / (noop_ms + d), 3),
            }
        )
    return {
        "noop_cpu_ms": round(noop_ms, 4),
        "calls": len(calls),
        "tools": tools,
        "median_direct_noop_calls": round(median(t["direct_noop_calls"] for t in tools), 2) if tools else None,
        "max_mcp_over_noop_plus_direct": max((t["mcp_over_noop_plus_direct"] for t in tools), default=None),
    }


def _reset(ctx: Context) -> dict[str, Any]:
    """task_episode (an episode of a task, ready for its first call) at the default scale, CPU per
    reset; at each scale, `Episode.create` (a reset without setup: the tasks are written against
    the default scale's rows). The first call is timed apart: SQLite parses the schema then."""
    from mcpsim.engine import Episode
    from mcpsim.tasks import load_tasks, task_episode

    world = ctx.worlds["retail"]
    n = 5 if ctx.quick else 40
    subjects: list[tuple[str, str, int, Any]] = [
        ("default", task.id, len(task.setup), lambda t=task: task_episode(world, t, templates=ctx.templates))
        for task in load_tasks("retail").tasks[: 3 if ctx.quick else 8]
    ]
    subjects += [
        (scale, "(none)", 0, lambda s=scale: Episode.create(world, 0, s, templates=ctx.templates))
        for scale in ctx.world_scales(world)
    ]
    out = []
    for scale, task_id, setup, make in subjects:
        make().close()  # builds the template (and the task's)
        create, first = [], []
        for _ in range(n):
            c = time.process_time()
            episode = make()
            create.append(time.process_time() - c)
            c = time.process_time()
            episode.call("calculate", {"expression": "1 + 1"})
            first.append(time.process_time() - c)
            episode.close()
        out.append(
            {
                "scale": scale,
                "task": task_id,
                "setup_actions": setup,
                "reset_cpu_ms": round(median(create) * 1e3, 4),
                "first_call_cpu_ms": round(median(first) * 1e3, 4),
            }
        )
    tasks = [r for r in out if r["task"] != "(none)"]
    return {
        "rows": out,
        "median_task_reset_cpu_ms": round(median(r["reset_cpu_ms"] for r in tasks), 4),
        "median_task_first_call_cpu_ms": round(median(r["first_call_cpu_ms"] for r in tasks), 4),
    }


def _idle(ctx: Context, total: int, active: int) -> dict[str, Any]:
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, str(IDLE_PROBE), str(ctx.cache_dir), str(total), str(active)],
        capture_output=True,
        text=True,
        timeout=3600,
        cwd=str(ctx.scratch),
        env=env,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-500:])
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def run(ctx: Context) -> dict[str, Any]:
    if "retail" not in ctx.worlds:
        ctx.skip("targets", "all", "the retail world did not load")
        return {}
    results: dict[str, Any] = {}
    steps = [
        ("reads", lambda: _reads(ctx)),
        ("reset", lambda: _reset(ctx)),
        ("graded", lambda: _graded(ctx)),
    ]
    plans = [(40, 8)] if ctx.quick else [(10_000, 100), (200, 200)]
    for total, active in plans:
        steps.append((f"idle {total}/{active}", lambda t=total, a=active: _idle(ctx, t, a)))  # type: ignore[misc]
    for name, step in steps:
        print(f"  targets: {name}", flush=True)
        try:
            results[name] = step()
        except Exception as exc:
            ctx.skip("targets", name, f"{type(exc).__name__}: {exc}"[:300])
    return results
