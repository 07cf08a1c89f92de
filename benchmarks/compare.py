"""Compare two source trees of mcpsim side by side: the same micro-measurements run in fresh
subprocesses, alternating between the trees round after round (A B B A A B ...), so machine load
hits both alike. Used to measure a candidate optimisation against the code it changes.

    python benchmarks/compare.py --base /path/to/mcpsim-checkout --candidate /path/to/patched-copy \\
        [--measures toolcalls,create,grade,e2e,memory] [--rounds 3]

A tree is a checkout of this repository (its `mcpsim/` and `worlds/` folders are imported in
place of the installed ones). Prints a table and writes --json if given.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if __package__ in (None, ""):
    sys.path.append(str(HERE.parent))

MEASURES = ["toolcalls", "create", "grade", "e2e", "memory"]


# -- workers (run inside a subprocess whose PYTHONPATH points at one tree) ---------------------------


def _templates(cache: str) -> Any:
    from mcpsim.engine import TemplateCache

    return TemplateCache(cache)


def w_toolcalls(cache: str) -> dict[str, Any]:
    """In-memory round trips (SDK Client -> mcpsim server), interleaved; wall and CPU medians."""
    import anyio
    from mcp import Client

    from benchmarks.bare_server import build_bare_server
    from benchmarks.common import Interleaved, rotations
    from benchmarks.toolcalls import TOOLS, RetailArgs
    from mcpsim.engine import Episode
    from mcpsim.serve import build_server
    from mcpsim.world import load_world

    world = load_world("retail")
    episode = Episode.create(world, 0, "default", templates=_templates(cache))
    args = RetailArgs(episode)
    wall, cpu = Interleaved(), Interleaved()

    async def main() -> None:
        async with Client(build_bare_server()) as bare, Client(build_server(world, lambda _id: episode)) as sim:
            await sim.list_tools()
            variants = {"noop": (bare, "noop", dict)}
            for name, (tool, _) in TOOLS.items():
                variants[name] = (sim, tool, lambda n=name: args.args(n))
            for client, tool, make in variants.values():
                for _ in range(20):
                    await client.call_tool(tool, make())
            for order in rotations(list(variants), 12):
                for name in order:
                    client, tool, make = variants[name]
                    ws, cs = [], []
                    for _ in range(20):
                        a = make()
                        c0, t0 = time.process_time(), time.perf_counter()
                        await client.call_tool(tool, a)
                        ws.append(time.perf_counter() - t0)
                        cs.append(time.process_time() - c0)
                    wall.add_round(name, ws)
                    cpu.add_round(name, cs)

    anyio.run(main)
    episode.close()
    out = {}
    for name, s in wall.summary().items():
        out[f"{name} wall ms"] = s["median_ms"]
    for name, s in cpu.summary().items():
        out[f"{name} CPU ms"] = s["median_ms"]
    return out


def w_create(cache: str) -> dict[str, Any]:
    """Episode creation, and creation + the first tool call (what a deferred cost moves to)."""
    from benchmarks.common import median
    from mcpsim.engine import Episode
    from mcpsim.world import load_world

    templates = _templates(cache)
    out = {}
    for name in ("retail", "airline"):
        world = load_world(name)
        templates.get(world, 0, "default")
        create, first = [], []
        for _ in range(150):
            t0 = time.perf_counter()
            episode = Episode.create(world, 0, "default", templates=templates)
            t1 = time.perf_counter()
            if name == "retail":
                episode.call("calculate", {"expression": "1 + 1"})
            else:  # the first query that reads a table (SQLite parses the schema then)
                episode.query("SELECT count(*) AS n FROM _mcpsim_meta")
            t2 = time.perf_counter()
            episode.close()
            create.append(t1 - t0)
            first.append(t2 - t0)
        out[f"{name} create ms"] = round(median(create) * 1e3, 4)
        out[f"{name} create + first use ms"] = round(median(first) * 1e3, 4)
    return out


def w_grade(cache: str) -> dict[str, Any]:
    from benchmarks.common import median
    from mcpsim.grading import Verifier
    from mcpsim.tasks import gold_steps, load_tasks, run_solution, task_episode
    from mcpsim.world import load_world

    world = load_world("retail")
    tasks = load_tasks("retail")
    templates = _templates(cache)
    verifier = Verifier(world, tasks, templates=templates)
    first, steady, hashes = [], [], []
    for task in tasks.tasks[:12]:
        episodes = []
        for _ in range(3):
            episode = task_episode(world, task, templates=templates)
            conversation = run_solution(episode, task, gold_steps(task, world))
            episodes.append((episode, conversation))
        for i, (episode, conversation) in enumerate(episodes):
            t0 = time.perf_counter()
            verdict = (
                verifier.grade(episode, task, task.oracle_answer(), conversation=conversation)
                if conversation is not None
                else verifier.grade(episode, task, task.oracle_answer())
            )
            (first if i == 0 else steady).append(time.perf_counter() - t0)
            assert verdict.passed, (task.id, verdict.failure)
        t0 = time.perf_counter()
        episodes[-1][0].state_hash()
        hashes.append(time.perf_counter() - t0)
        for episode, _ in episodes:
            episode.close()
    return {
        "first grade ms": round(median(first) * 1e3, 3),
        "steady grade ms": round(median(steady) * 1e3, 3),
        "state hash ms": round(median(hashes) * 1e3, 3),
    }


def w_e2e(cache: str) -> dict[str, Any]:
    import anyio

    from mcpsim.runner import HttpBackend, InProcessBackend, RunConfig, ScriptedUser, make_agent, run_episodes
    from mcpsim.serve import EpisodeManager, ServeConfig, create_app, serve_in_thread
    from mcpsim.tasks import load_tasks

    tasks = load_tasks("retail").tasks[:16]
    out: dict[str, Any] = {}

    async def once(backend: Any, c: int) -> tuple[float, int]:
        with tempfile.TemporaryDirectory() as tmp:
            config = RunConfig(world="retail", tasks=tasks, out=Path(tmp), trials=1, concurrency=c)
            t0 = time.perf_counter()
            result = await run_episodes(config, backend, lambda: make_agent("oracle"), ScriptedUser)
            failed = sum(t.trials - t.passes for t in result.summary.tasks)
            return result.ran / (time.perf_counter() - t0), failed

    app = create_app(
        ServeConfig(world="retail", scale="small", cache_dir=cache, max_episodes=40, ttl_seconds=None, token="bench")
    )
    with serve_in_thread(app) as url:

        async def main() -> None:
            backends = {
                "in-process": InProcessBackend(EpisodeManager(_templates(cache), max_episodes=40, ttl_seconds=None)),
                "http": HttpBackend(url, "bench"),
            }
            for backend in backends.values():
                await once(backend, 8)  # warm: task templates, gold replays
            for name, backend in backends.items():
                rate, failed = await once(backend, 16)
                out[f"{name} c=16 episodes/s"] = round(rate, 3)
                out[f"{name} c=16 episodes not passed"] = failed
            await backends["http"].aclose()

        anyio.run(main)
    return out


def w_memory(cache: str) -> dict[str, Any]:
    from benchmarks.common import rss_bytes, settle
    from mcpsim.engine import Episode
    from mcpsim.world import load_world

    world = load_world("retail")
    templates = _templates(cache)
    for _ in range(3):
        Episode.create(world, 0, "default", templates=templates).close()
    settle()
    base = rss_bytes()
    episodes = [Episode.create(world, 0, "default", id=f"m{i}", templates=templates) for i in range(200)]
    settle()
    fresh = (rss_bytes() - base) / len(episodes)
    mid = rss_bytes()
    order = episodes[0].query("SELECT id FROM orders LIMIT 1")[0]["id"]
    customer = episodes[0].query("SELECT id FROM customers LIMIT 1")[0]["id"]
    for episode in episodes[:50]:  # used: a read, a write, then a full read (a state hash, as grading does)
        episode.call("get_order_details", {"order_id": order})
        episode.call(
            "add_customer_address",
            {"customer_id": customer, "line1": "1 Memory Lane", "city": "Springfield", "state": "CA", "zip": "94107"},
        )
        episode.state_hash()
    settle()
    used = (rss_bytes() - mid) / 50
    for episode in episodes:
        episode.close()
    return {"MB per fresh episode": round(fresh / 1e6, 3), "extra MB per used episode": round(used / 1e6, 3)}


WORKERS = {"toolcalls": w_toolcalls, "create": w_create, "grade": w_grade, "e2e": w_e2e, "memory": w_memory}


# -- driver ------------------------------------------------------------------------------------------


def _path_dir(tree: Path, scratch: Path, label: str) -> Path:
    folder = scratch / f"path-{label}"
    folder.mkdir()
    (folder / "mcpsim").symlink_to(tree / "mcpsim")
    (folder / "mcpsim_worlds").symlink_to(tree / "worlds")
    return folder


def _worker(measure: str, path_dir: Path, cache: Path, scratch: Path) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(path_dir), str(HERE.parent)])
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", measure, "--cache", str(cache)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(scratch),
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{measure} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path)
    parser.add_argument("--candidate", type=Path)
    parser.add_argument("--measures", default=",".join(MEASURES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        from benchmarks.common import quiet_logs

        quiet_logs()
        print(json.dumps(WORKERS[args.worker](args.cache)))
        return 0
    if not args.base or not args.candidate:
        parser.error("--base and --candidate are required")
    from benchmarks.common import median

    measures = [m.strip() for m in args.measures.split(",") if m.strip()]
    results: dict[str, dict[str, dict[str, list[float]]]] = {}
    with tempfile.TemporaryDirectory(prefix="mcpsim-compare-") as tmp:
        scratch = Path(tmp)
        trees = {"base": args.base.resolve(), "candidate": args.candidate.resolve()}
        paths = {label: _path_dir(tree, scratch, label) for label, tree in trees.items()}
        caches = {label: scratch / f"cache-{label}" for label in trees}
        for measure in measures:
            print(f"{measure}: warm-up (template builds)", flush=True)
            for label in trees:
                _worker(measure, paths[label], caches[label], scratch)
            for r in range(args.rounds):
                order = ["base", "candidate"] if r % 2 == 0 else ["candidate", "base"]
                for label in order:
                    try:
                        out = _worker(measure, paths[label], caches[label], scratch)
                    except RuntimeError as exc:  # one failed run must not lose the others
                        print(f"{measure}: {label} run failed: {str(exc)[-600:]}", flush=True)
                        continue
                    for key, value in out.items():
                        results.setdefault(measure, {}).setdefault(key, {}).setdefault(label, []).append(value)
                print(f"{measure}: round {r + 1}/{args.rounds} done", flush=True)
    table = []
    for measure, keys in results.items():
        for key, by in keys.items():
            if "base" not in by or "candidate" not in by:
                continue
            b, c = median(by["base"]), median(by["candidate"])
            table.append(
                {
                    "measure": measure,
                    "figure": key,
                    "base": round(b, 4),
                    "candidate": round(c, 4),
                    "candidate / base": round(c / b, 3) if b else None,
                    "runs": by,
                }
            )
    if args.json:
        args.json.write_text(json.dumps(table, indent=1))
    width = max(len(f"{t['measure']}: {t['figure']}") for t in table) if table else 10
    print(f"{'figure':<{width}}  {'base':>10}  {'candidate':>10}  {'ratio':>7}")
    for t in table:
        ratio = t["candidate / base"]
        print(
            f"{t['measure'] + ': ' + t['figure']:<{width}}  {t['base']:>10}  {t['candidate']:>10}  "
            f"{'-' if ratio is None else ratio:>7}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
