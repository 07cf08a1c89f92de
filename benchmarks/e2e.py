"""Oracle episodes per second, end to end (create the task episode, list tools, read the policy,
replay the gold actions over MCP, grade, record), in process and over HTTP, at concurrency 1, 16
and 64. The same task mix at every concurrency; the two backends run one after the other at each
concurrency (one round: a second doubles the section's time). The runner writes (and fsyncs)
its JSONL as it would in a real run."""

from __future__ import annotations

import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import anyio

from benchmarks.common import median
from benchmarks.context import Context

CONCURRENCY = (1, 16, 64)


async def _run_once(ctx: Context, backend: Any, tasks: list[Any], trials: int, concurrency: int) -> dict[str, Any]:
    from mcpsim.runner import RunConfig, ScriptedUser, make_agent, run_episodes

    with tempfile.TemporaryDirectory(dir=ctx.scratch, prefix="run-") as out:
        config = RunConfig(world="retail", tasks=tasks, out=Path(out), trials=trials, concurrency=concurrency)
        cpu = time.process_time()
        start = time.perf_counter()
        result = await run_episodes(config, backend, lambda: make_agent("oracle"), ScriptedUser)
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu
    s = result.summary
    return {
        "episodes": result.ran,
        "wall_s": round(wall, 3),
        "episodes_per_s": round(result.ran / wall, 3),
        "cpu_s_per_episode": round(cpu / max(1, result.ran), 4),
        "pass_at_1": s.pass_at_1,
        "errors": s.errors,
        "tool_calls": s.tool_calls,
    }


def run(ctx: Context) -> dict[str, Any]:
    if "retail" not in ctx.worlds:
        ctx.skip("e2e", "all", "the retail world did not load")
        return {}
    from mcpsim.runner import HttpBackend, InProcessBackend
    from mcpsim.serve import EpisodeManager, serve_in_thread
    from mcpsim.tasks import load_tasks

    all_tasks = load_tasks("retail").tasks
    tasks = all_tasks[:3] if ctx.quick else all_tasks[:16]
    rounds = 1
    # trials per concurrency: the same task mix; in full mode enough episodes to fill every slot
    trials = {1: 1, 16: 1, 64: 1} if ctx.quick else {1: 1, 16: 2, 64: 4}
    cap = max(CONCURRENCY) + 8

    async def main(url: str) -> dict[str, Any]:
        backends = {
            "in-process": InProcessBackend(EpisodeManager(ctx.templates, max_episodes=cap, ttl_seconds=None)),
            "http": HttpBackend(url, "bench"),
        }
        try:
            warm = {}
            for name, backend in backends.items():  # task templates and gold replays: built once, not timed
                print(f"  oracle warm-up ({name})", flush=True)
                warm[name] = await _run_once(ctx, backend, tasks, 1, min(8, len(tasks)))
            runs: dict[str, list[dict[str, Any]]] = {}
            for r in range(rounds):
                order = [(b, c) for c in CONCURRENCY for b in backends]
                for backend_name, c in order if r % 2 == 0 else list(reversed(order)):
                    print(f"  oracle round {r + 1}/{rounds}: {backend_name}, concurrency {c}", flush=True)
                    runs.setdefault(f"{backend_name}@{c}", []).append(
                        await _run_once(ctx, backends[backend_name], tasks, trials[c], c)
                    )
        finally:
            await backends["http"].aclose()
        table = []
        for key, results in runs.items():
            backend_name, c = key.split("@")
            table.append(
                {
                    "backend": backend_name,
                    "concurrency": int(c),
                    "episodes": results[0]["episodes"],
                    "episodes_per_s": round(median(x["episodes_per_s"] for x in results), 3),
                    "episodes_per_s_runs": [x["episodes_per_s"] for x in results],
                    "cpu_ms_per_episode": round(median(x["cpu_s_per_episode"] for x in results) * 1e3, 2),
                    "pass_at_1": min(x["pass_at_1"] for x in results),
                    "errors": sum(x["errors"] for x in results),
                    "tool_calls_per_episode": round(results[0]["tool_calls"] / max(1, results[0]["episodes"]), 2),
                }
            )
        return {"tasks": len(tasks), "rounds": rounds, "trials": trials, "warmup": warm, "runs": table}

    with ExitStack() as stack:
        url = stack.enter_context(serve_in_thread(ctx.retail_app(cap)))
        return anyio.run(main, url)
