"""Profiles (pyinstrument, optional) of mcpsim's read and write tool-call paths in memory (SDK
client -> SDK server -> mcpsim -> world -> SQLite and back), of episode creation and of grading.
Each profile's time is attributed to the subsystem that spent it, so the report can say where a
call's time goes; the full call trees are written next to the results (profile-*.txt)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from benchmarks.context import Context

LABELS = {
    "sdk": "MCP SDK: client/server dispatch, request/response models, in-memory transport",
    "sdk.args": "MCP SDK server: argument validation (pydantic)",
    "sdk.result": "MCP SDK server: result validation + conversion (pydantic, JSON text content)",
    "sdk.serialize": "MCP SDK server: response serialization",
    "client.validate": "MCP SDK client: output-schema validation (jsonschema)",
    "wrapper": "mcpsim: MCP tool wrapper (episode lookup, log context)",
    "middleware": "mcpsim: rejected-call middleware",
    "episode": "mcpsim episode: call bookkeeping (Python)",
    "episode.orm": "mcpsim episode: SQLAlchemy Session, BEGIN/COMMIT",
    "episode.sql": "mcpsim episode: meta read/write, transcript, change log (SQL + JSON)",
    "episode.json": "mcpsim episode: result to JSON (to_jsonable_python)",
    "world": "world tool: Python (rendering, logic)",
    "world.orm": "world tool: SQLAlchemy/SQLModel ORM (compile, execute, load)",
    "create.deserialize": "deserialize (copy the template bytes)",
    "create.schema": "first query: SQLite parses the schema (tables, indexes, change-log triggers) + meta read",
    "create.engine": "SQLAlchemy engine per episode (create_engine, event listener)",
    "create.other": "Episode.__init__ rest (fault profile, logger, lock)",
    "create.close": "close (engine dispose, connection close)",
    "grade.hash": "state hash (Episode.state_hash)",
    "grade.checks": "rubric checks (in a worker thread)",
    "grade.changes": "change log read + net changes + diff",
    "grade.other": "verdict, refusal checks, thread pool",
    "other": "other (benchmark loop)",
}


# Frames that name a subsystem whatever encloses them: (function, a part of its file's path, bucket)
_FRAMES = [
    ("validate_tool_result", "mcp/client", "client.validate"),
    ("__call__", "mcpsim/serve/_mcp.py", "middleware"),
    ("call", "mcpsim/serve/_mcp.py", "wrapper"),
    ("_execute", "mcpsim/engine/_episode.py", "episode"),
    ("__init__", "mcpsim/engine/_episode.py", "create.other"),
    ("close", "mcpsim/engine/_episode.py", "create.close"),
    ("validate_arguments", "func_metadata", "sdk.args"),
    ("convert_result", "func_metadata", "sdk.result"),
    ("_serialize", "mcp/server/runner", "sdk.serialize"),
]


def _classify(frame: Any, inherited: str) -> str:
    path = (frame.file_path or "").replace("\\", "/")
    fn = frame.function.rsplit(".", 1)[-1]  # pyinstrument names methods Class.method
    for name, where, bucket in _FRAMES:
        if fn == name and where in path:
            return bucket
    orm = "sqlalchemy" in path or "sqlmodel" in path
    if "/worlds/" in path and inherited.startswith("episode"):
        return "world"
    if inherited in ("world", "world.orm") and orm:
        return "world.orm"
    if inherited == "episode" and orm:
        return "episode.orm"
    if inherited == "episode" and path.endswith("mcpsim/engine/_store.py"):
        return "episode.sql"
    if inherited == "episode" and fn == "to_jsonable_python":
        return "episode.json"
    # episode creation
    if fn == "deserialize":
        return "create.deserialize"
    if fn == "read_meta" and inherited == "create.other":
        return "create.schema"
    if fn == "engine_for":
        return "create.engine"
    # grading
    if fn == "state_hash" and inherited.startswith("grade"):
        return "grade.hash"
    if fn == "_run_checks":
        return "grade.checks"
    if fn in ("net_changes", "diff_entries", "changes") and inherited.startswith("grade"):
        return "grade.changes"
    if fn == "grade":
        return "grade.other"
    return inherited


def breakdown(session: Any, calls: int, root: str = "sdk") -> list[dict[str, Any]]:
    """Time per subsystem, per call (ms) and as a share, attributed frame by frame: a frame's
    own time goes to the nearest enclosing frame that names a subsystem."""
    totals: dict[str, float] = {}

    def walk(frame: Any, bucket: str) -> None:
        bucket = _classify(frame, bucket)
        own = frame.time - sum(c.time for c in frame.children)
        totals[bucket] = totals.get(bucket, 0.0) + max(0.0, own)
        for child in frame.children:
            walk(child, bucket)

    frame = session.root_frame()
    if frame is None:
        return []
    walk(frame, root)
    total = sum(totals.values()) or 1.0
    rows = [
        {"bucket": k, "what": LABELS.get(k, k), "ms_per_call": round(v / calls * 1e3, 4), "share": round(v / total, 4)}
        for k, v in totals.items()
    ]
    return sorted(rows, key=lambda r: -r["share"])


def _profile(fn: Callable[[], Any], interval: float) -> Any:
    from pyinstrument import Profiler

    profiler = Profiler(interval=interval, async_mode="disabled")
    profiler.start()
    try:
        fn()
    finally:
        profiler.stop()
    return profiler


def run(ctx: Context) -> dict[str, Any]:
    try:
        import pyinstrument  # noqa: F401
    except ImportError:
        ctx.skip("profiles", "all", "pyinstrument is not installed (pip install pyinstrument)")
        return {}
    if "retail" not in ctx.worlds:
        ctx.skip("profiles", "all", "the retail world did not load")
        return {}
    from mcp import Client

    from benchmarks.toolcalls import RetailArgs
    from mcpsim.engine import Episode
    from mcpsim.serve import build_server

    world = ctx.worlds["retail"]
    calls = 60 if ctx.quick else 400
    interval = 0.0005
    out: dict[str, Any] = {"interval_s": interval, "profiles": {}}
    ctx.results_dir.mkdir(parents=True, exist_ok=True)

    def save(name: str, profiler: Any, n: int, root: str, what: str) -> None:
        path = ctx.results_dir / f"profile-{name}.txt"

        def top(flat_time: str, lines: int) -> str:
            text = profiler.output_text(unicode=False, color=False, flat=True, flat_time=flat_time)
            return "\n".join(text.splitlines()[: lines + 6])

        path.write_text(
            "\n".join(
                [
                    f"# {what}: {n} calls, pyinstrument every {interval * 1e3:g} ms",
                    "",
                    "## Call tree (library frames folded)",
                    profiler.output_text(unicode=False, color=False, show_all=False),
                    "## Functions by total time (flat)",
                    top("total", 60),
                    "",
                    "## Functions by own time (flat)",
                    top("self", 40),
                    "",
                ]
            )
        )
        out["profiles"][name] = {
            "what": what,
            "calls": n,
            "file": path.name,
            "duration_s": round(profiler.last_session.duration, 3),
            "breakdown": breakdown(profiler.last_session, n, root),
        }

    for variant, tool in (
        ("read_order", "get_order_details"),
        ("write_address", "add_customer_address"),
        ("calculate", "calculate"),
    ):
        print(f"  profile: {tool} in memory ({calls} calls)", flush=True)
        episode = Episode.create(world, 0, "default", templates=ctx.templates)
        args = RetailArgs(episode)
        server = build_server(world, lambda _id, e=episode: e)
        holder: dict[str, Any] = {}

        async def session(
            server: Any = server,
            args: Any = args,
            variant: str = variant,
            tool: str = tool,
            holder: dict[str, Any] = holder,
        ) -> None:
            async with Client(server) as client:
                await client.list_tools()
                for _ in range(20):
                    await client.call_tool(tool, args.args(variant))
                from pyinstrument import Profiler

                profiler = Profiler(interval=interval, async_mode="disabled")
                profiler.start()
                for _ in range(calls):
                    await client.call_tool(tool, args.args(variant))
                profiler.stop()
                holder["profiler"] = profiler

        anyio.run(session)
        episode.close()
        save(
            f"inmemory-{variant}",
            holder["profiler"],
            calls,
            "sdk",
            f"{tool} over the in-memory MCP transport, SDK Client to mcpsim server and back",
        )

    n_create = 100 if ctx.quick else 500
    print(f"  profile: episode creation ({n_create})", flush=True)

    def create() -> None:
        for _ in range(n_create):
            Episode.create(world, 0, "default", templates=ctx.templates).close()

    for _ in range(10):
        Episode.create(world, 0, "default", templates=ctx.templates).close()
    save("create", _profile(create, interval), n_create, "create.other", "Episode.create + close, retail default")

    from mcpsim.grading import Verifier
    from mcpsim.tasks import gold_steps, load_tasks, run_solution, task_episode

    tasks = load_tasks("retail").tasks[: 4 if ctx.quick else 12]
    verifier = Verifier(world, load_tasks("retail"), templates=ctx.templates)
    solved = []
    for task in tasks:
        verifier.gold_changes(task)  # the gold replay is cached: profile the steady state
        for _ in range(2):
            episode = task_episode(world, task, templates=ctx.templates)
            conversation = run_solution(episode, task, gold_steps(task, world))
            solved.append((episode, task, conversation))
    print(f"  profile: grading ({len(solved)} grades)", flush=True)

    def grade() -> None:
        for episode, task, conversation in solved:
            verifier.grade(episode, task, task.oracle_answer(), conversation=conversation)

    save("grade", _profile(grade, interval), len(solved), "other", "Verifier.grade (steady state), retail tasks")
    for episode, _, _ in solved:
        episode.close()
    return out
