"""Tool-call round trips: a bare SDK server's no-op tool against mcpsim's tools, over in-memory,
stdio and streamable HTTP, interleaved in one loop per transport so each ratio is measured side
by side. In memory (full mode), the same tools also run against a large-scale episode."""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import Any

import anyio

from benchmarks.common import Interleaved, rotations, timed
from benchmarks.context import Context

BARE_SCRIPT = Path(__file__).with_name("bare_server.py")

# variant -> (tool, what it exercises)
TOOLS = {
    "calculate": ("calculate", "read tool without a database query (pure framework overhead)"),
    "read_simple": ("find_customer_by_email", "read: one indexed ORM select"),
    "read_order": ("get_order_details", "read: an order with items, payments, shipments (about 10 ORM queries)"),
    "write_address": ("add_customer_address", "write: ORM select + insert, change-log trigger"),
}


class RetailArgs:
    """Valid arguments for the retail tools, from the template the server was built from (same
    world, seed and scale: same rows). Writes rotate over customers and ZIP codes so the address
    book of one customer does not grow with the number of calls."""

    def __init__(self, episode: Any, seed: int = 7) -> None:
        self.orders = [r["id"] for r in episode.query("SELECT id FROM orders ORDER BY id LIMIT 50")]
        rows = episode.query("SELECT id, email FROM customers ORDER BY id LIMIT 200")
        self.customers = [r["id"] for r in rows]
        self.emails = [r["email"] for r in rows]
        self.rng = random.Random(seed)
        self.n = 0

    def args(self, variant: str) -> dict[str, Any]:
        self.n += 1
        i = self.n
        if variant == "calculate":
            return {"expression": f"({i % 97} + 2.5) * 3 - 1"}
        if variant == "read_simple":
            return {"email": self.emails[i % len(self.emails)]}
        if variant == "read_order":
            return {"order_id": self.orders[i % len(self.orders)]}
        if variant == "write_address":
            return {
                "customer_id": self.customers[i % len(self.customers)],
                "line1": f"{i} Benchmark Way",
                "city": "Springfield",
                "state": "CA",
                "zip": f"{self.rng.randrange(10000, 99999)}",
            }
        raise KeyError(variant)


Variant = tuple[Any, str, Callable[[], dict[str, Any]]]  # client, tool name, argument factory


async def _interleave(
    variants: dict[str, Variant], rounds: int, batch: int, warmup: int, errors: dict[str, str]
) -> tuple[Interleaved, Interleaved]:
    """Wall-clock and process CPU time per call. CPU time counts both ends when the server runs
    in this process (in memory, HTTP in a thread): it is far less disturbed by other processes
    competing for the cores than wall time is."""
    import time

    async def one(name: str) -> tuple[float, float]:
        client, tool, make = variants[name]
        args = make()
        cpu = time.process_time()
        start = time.perf_counter()
        result = await client.call_tool(tool, args)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu
        if result.is_error and name not in errors:
            text = " ".join(getattr(c, "text", "") for c in result.content)
            errors[name] = text[:300]
        return elapsed, cpu

    for name in variants:
        for _ in range(warmup):
            await one(name)
    wall, cpu = Interleaved(), Interleaved()
    for order in rotations(list(variants), rounds):
        for name in order:
            pairs = [await one(name) for _ in range(batch)]
            wall.add_round(name, [w for w, _ in pairs])
            cpu.add_round(name, [c for _, c in pairs])
    return wall, cpu


def _sizes(ctx: Context) -> tuple[int, int, int]:
    """rounds, batch, warmup"""
    return (5, 10, 5) if ctx.quick else (20, 25, 20)


def _retail_episode(ctx: Context, scale: str) -> Any:
    from mcpsim.engine import Episode

    return Episode.create(ctx.worlds["retail"], 0, scale, templates=ctx.templates)


def _stdio_env(ctx: Context) -> dict[str, str]:
    env = {"MCPSIM_CACHE_DIR": str(ctx.cache_dir)}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


async def _measure_transport(ctx: Context, transport: str, scales: list[str]) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    from benchmarks.bare_server import build_bare_server

    rounds, batch, warmup = _sizes(ctx)
    world = ctx.worlds["retail"]
    errors: dict[str, str] = {}
    setup: dict[str, float] = {}
    async with AsyncExitStack() as stack:
        sync_stack = stack.enter_context(ExitStack())
        variants: dict[str, Variant] = {}
        servers: dict[str, Any] = {}  # scale -> client of mcpsim's server
        if transport == "inmemory":
            from mcpsim.serve import build_server

            bare = await stack.enter_async_context(Client(build_bare_server()))
            for scale in scales:
                episode = _retail_episode(ctx, scale)
                sync_stack.callback(episode.close)
                servers[scale] = (
                    await stack.enter_async_context(Client(build_server(world, lambda _id, e=episode: e))),
                    RetailArgs(episode),
                )
        elif transport == "stdio":
            env = _stdio_env(ctx)
            cwd = str(ctx.scratch)  # not the repository: `python -m` puts the cwd first on sys.path
            seconds, bare = await _timed_enter(
                stack, Client(StdioServerParameters(command=sys.executable, args=[str(BARE_SCRIPT)], env=env, cwd=cwd))
            )
            setup["bare_start_s"] = seconds
            for scale in scales:
                episode = _retail_episode(ctx, scale)
                sync_stack.callback(episode.close)
                seconds, client = await _timed_enter(
                    stack,
                    Client(
                        StdioServerParameters(
                            command=sys.executable,
                            args=["-m", "mcpsim", "serve", "retail", "--scale", scale, "--log-level", "WARNING"],
                            env=env,
                            cwd=cwd,
                        )
                    ),
                )
                setup[f"mcpsim_{scale}_start_s"] = seconds
                servers[scale] = (client, RetailArgs(episode))
        elif transport == "http":
            from mcpsim.serve import ServeConfig, create_app, serve_in_thread

            bare_server = build_bare_server()
            bare_app = bare_server.streamable_http_app(json_response=True, host="127.0.0.1")
            bare_url = sync_stack.enter_context(serve_in_thread(bare_app))
            bare = await stack.enter_async_context(Client(f"{bare_url}/mcp"))
            for scale in scales:
                episode = _retail_episode(ctx, scale)
                sync_stack.callback(episode.close)
                seconds, app = timed(
                    lambda s=scale: create_app(
                        ServeConfig(
                            world="retail",
                            seed=0,
                            scale=s,
                            cache_dir=str(ctx.cache_dir),
                            ttl_seconds=None,
                            no_auth=True,
                            shared_default=True,
                        )
                    )
                )  # measures the one default episode, as before
                setup[f"mcpsim_{scale}_app_s"] = round(seconds, 3)
                base = sync_stack.enter_context(serve_in_thread(app))
                client = await stack.enter_async_context(Client(f"{base}/mcp"))
                servers[scale] = (client, RetailArgs(episode))
        else:
            raise ValueError(transport)

        variants["noop"] = (bare, "noop", dict)
        for variant, (tool, _) in TOOLS.items():
            for scale, (client, args) in servers.items():
                name = variant if scale == "default" else f"{variant}@{scale}"
                variants[name] = (client, tool, lambda v=variant, a=args: a.args(v))
        for client in {id(c): c for c, _, _ in variants.values()}.values():
            await client.list_tools()  # the SDK client caches output schemas from the listing
        wall, cpu = await _interleave(variants, rounds, batch, warmup, errors)
    summary = wall.summary("noop")
    if transport != "stdio":  # the server's CPU is in another process over stdio
        for name, s in cpu.summary("noop").items():
            summary[name]["cpu"] = {k: s[k] for k in ("median_ms", "p99_ms", "ratio_median", "ratio_paired")}
    for name, s in summary.items():
        base = name.split("@")[0]
        s["tool"] = "noop" if base == "noop" else TOOLS[base][0]
        s["scale"] = name.split("@")[1] if "@" in name else ("-" if base == "noop" else "default")
        if name in errors:
            s["error"] = errors[name]
    return {
        "variants": summary,
        "rounds": rounds,
        "calls_per_round": batch,
        "warmup_calls": warmup,
        "setup": setup,
        "client_mode": "default mode (auto: protocol 2026-07-28)",
    }


async def _timed_enter(stack: AsyncExitStack, cm: Any) -> tuple[float, Any]:
    import time

    start = time.perf_counter()
    value = await stack.enter_async_context(cm)
    await value.list_tools()  # the first request: the server is up and answering
    return round(time.perf_counter() - start, 3), value


def run(ctx: Context) -> dict[str, Any]:
    if "retail" not in ctx.worlds:
        ctx.skip("toolcalls", "all transports", "the retail world did not load")
        return {}
    out: dict[str, Any] = {"tools": {k: {"tool": t, "what": w} for k, (t, w) in TOOLS.items()}, "transports": {}}
    for transport in ("inmemory", "stdio", "http"):
        scales = ctx.world_scales(ctx.worlds["retail"]) if transport == "inmemory" else ["default"]
        print(f"  tool calls over {transport} ({', '.join(scales)})", flush=True)
        try:
            out["transports"][transport] = anyio.run(_measure_transport, ctx, transport, scales)
        except Exception as exc:
            import traceback

            traceback.print_exc()
            ctx.skip("toolcalls", transport, f"{type(exc).__name__}: {exc}"[:300])
    return out
