"""The research world at its size (issue 33, item 5): the corpus at each scale and the template
build of the largest (once, into a private template cache) against loading it back from disk;
a reset (`Episode.create` from the cached template) at the largest scale against retail's at its
default scale and a bare `deserialize` of the same bytes; and `Episode.call` of the world's tools
in process, interleaved round by round: `search` and `search_newest` (queries drawn, seeded, from
the corpus's own words), `open`, `find_in_page` and `get_document_info` (reads), and `calculate`
and `get_budget` (no-op-like calls). Every round runs on fresh episodes, so the spend stays
within the budget and the billing tables stay the size of a real episode's."""

from __future__ import annotations

import random
import re
import sqlite3
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from benchmarks.common import Interleaved, median, ratio, rotations, timed
from benchmarks.context import Context

CORPUS_TARGET = 10_000  # documents the issue asks a corpus to reach
NOOP = "calculate"  # the no-op-like call: the framework's cost with no database work
READ = "open"  # the read the search call is compared with
TOOLS = {  # variant -> what it exercises
    "search": "ranked search (FTS5 bm25 over the matching documents), one page of 5 with snippets",
    "search_newest": "the same queries, newest first",
    "open": "a document's first page (billed: call + first delivery)",
    "find_in_page": "a word in a document opened before",
    "get_document_info": "a document's details (free read)",
    "get_budget": "the account (two small SQL reads)",
    "calculate": "arithmetic, no database work (the no-op-like unit)",
}
SEARCH_TOOLS = ("search", "search_newest")


def _sizes(ctx: Context) -> dict[str, int]:
    if ctx.quick:
        return {"rounds": 3, "batch": 3, "reset_rounds": 3, "reset_batch": 4, "queries": 6, "docs": 6}
    return {"rounds": 15, "batch": 10, "reset_rounds": 10, "reset_batch": 10, "queries": 24, "docs": 24}


class Workload:
    """Arguments drawn from one scale's corpus with a fixed seed: queries of a document's first
    title words (mostly an organisation's name) and a word of its body; documents to open; and
    documents (opened first, untimed) with a word of theirs to find."""

    def __init__(self, rows: list[dict[str, Any]], scale: str, n_queries: int, n_docs: int) -> None:
        rng = random.Random(f"research-bench-{scale}")
        picked = rng.sample(rows, min(len(rows), n_queries + 2 * n_docs))
        self.queries = [self._query(rng, r) for r in picked[:n_queries]]
        self.open_ids = [str(r["id"]) for r in picked[n_queries : n_queries + n_docs]]
        found = picked[n_queries + n_docs :]
        self.find = [(str(r["id"]), rng.choice(_words(str(r["body"])) or ["the"])) for r in found]
        self.matches: list[int] = []  # documents each query matches (set by the caller)
        self.n: dict[str, int] = {}

    @staticmethod
    def _query(rng: random.Random, row: dict[str, Any]) -> str:
        title = re.findall(r"[^\W_]+", str(row["title"]))[:2]
        return " ".join([*title, rng.choice(_words(str(row["body"])) or ["report"])])

    def args(self, tool: str) -> dict[str, Any]:
        i = self.n[tool] = self.n.get(tool, -1) + 1
        if tool in SEARCH_TOOLS:
            return {"query": self.queries[i % len(self.queries)]}
        if tool in ("open", "get_document_info"):
            return {"doc_id": self.open_ids[i % len(self.open_ids)]}
        if tool == "find_in_page":
            doc_id, word = self.find[i % len(self.find)]
            return {"doc_id": doc_id, "text": word}
        if tool == "calculate":
            return {"expression": f"({i % 97} + 2.5) * 3 - 1"}
        return {}


def _words(body: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Za-z]{5,}", body)]


def _templates(ctx: Context, world: Any, scales: list[str]) -> tuple[Any, list[dict[str, Any]], dict[str, Any]]:
    """Every scale's template built by a cache of its own (so a build is measured whatever the
    suite built before), its document count, and the largest loaded back from disk."""
    from mcpsim.engine import Episode, TemplateCache

    folder = ctx.scratch / "research-templates"
    cache = TemplateCache(folder)
    corpus = []
    for scale in scales:
        print(f"  research template {scale}", flush=True)
        cpu = time.process_time()
        seconds, data = timed(partial(cache.get, world, 0, scale))
        cpu = time.process_time() - cpu
        episode = Episode.create(world, 0, scale, templates=cache)
        documents = episode.query("SELECT COUNT(*) AS n FROM documents")[0]["n"]
        episode.close()
        corpus.append(
            {"scale": scale, "documents": documents, "bytes": len(data), "build_s": round(seconds, 3)}
            | {"build_cpu_s": round(cpu, 3)}
        )
    largest = max(corpus, key=lambda c: c["documents"])
    loads, load_cpu = [], []
    for _ in range(5):
        cpu = time.process_time()
        seconds, _ = timed(lambda: TemplateCache(folder).get(world, 0, largest["scale"]))
        load_cpu.append(time.process_time() - cpu)
        loads.append(seconds)
    build = {
        **largest,
        "disk_load_ms": round(median(loads) * 1e3, 3),
        "disk_load_cpu_ms": round(median(load_cpu) * 1e3, 3),
        "build_over_load_cpu": ratio(largest["build_cpu_s"], median(load_cpu)),
        "reaches_target": largest["documents"] >= CORPUS_TARGET,
    }
    return cache, corpus, build


def _reset(ctx: Context, cache: Any, world: Any, scale: str) -> dict[str, Any]:
    """`Episode.create` of research at `scale` and of retail at default, and a bare
    `deserialize` of the research bytes (the page copy), interleaved; CPU and wall per create."""
    from mcpsim.engine import Episode

    retail = ctx.retail()
    raw = cache.get(world, 0, scale)
    variants: dict[str, Callable[[], Any]] = {
        f"research/{scale}": lambda: Episode.create(world, 0, scale, templates=cache),
        "deserialize": lambda: _deserialized(raw),
    }
    if retail is not None:
        variants["retail/default"] = lambda: Episode.create(retail, 0, "default", templates=ctx.templates)
    for make in variants.values():
        make().close()  # warm: the templates in memory
    sizes = _sizes(ctx)
    wall, cpu = Interleaved(), Interleaved()
    for order in rotations(list(variants), sizes["reset_rounds"]):
        for name in order:
            walls, cpus = [], []
            for _ in range(sizes["reset_batch"]):
                c, start = time.process_time(), time.perf_counter()
                made = variants[name]()
                walls.append(time.perf_counter() - start)
                cpus.append(time.process_time() - c)
                made.close()
            wall.add_round(name, walls)
            cpu.add_round(name, cpus)
    base = "retail/default" if retail is not None else "deserialize"
    out: dict[str, Any] = {"variants": {}, "baseline": base, "research_bytes": len(raw)}
    cpu_summary = cpu.summary(base)
    for name, s in wall.summary(base).items():
        out["variants"][name] = {**s, "cpu": cpu_summary[name]}
    research = out["variants"][f"research/{scale}"]
    out["research_over_deserialize_cpu"] = ratio(research["cpu"]["median_ms"], cpu_summary["deserialize"]["median_ms"])
    if retail is not None:
        out["retail_bytes"] = len(ctx.templates.get(retail, 0, "default"))
    return out


def _deserialized(data: bytes) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    conn.deserialize(data)
    return conn


def _fresh(world: Any, cache: Any, scale: str, load: Workload, errors: dict[str, str]) -> Any:
    """A round's episode: its first query made and the find_in_page documents opened (untimed)."""
    from mcpsim.engine import Episode

    episode = Episode.create(world, 0, scale, templates=cache)
    episode.call("get_budget", {})
    for doc_id, _ in load.find:
        result = episode.call("open", {"doc_id": doc_id})
        if result.is_error:
            errors.setdefault(f"open@{scale} (setup)", result.error or "")
    return episode


def _calls(ctx: Context, world: Any, cache: Any, scales: list[str], largest: str) -> dict[str, Any]:
    """Episode.call of every tool at the largest scale, and the search tools at every scale,
    interleaved round by round (fresh episodes each round); wall and process CPU per call."""
    from mcpsim.engine import Episode

    sizes = _sizes(ctx)
    loads = {}
    for scale in scales:
        episode = Episode.create(world, 0, scale, templates=cache)
        rows = episode.query("SELECT id, title, body FROM documents ORDER BY id")
        loads[scale] = Workload(rows, scale, sizes["queries"], sizes["docs"])
        loads[scale].matches = [_total(episode.call("search", {"query": q}).value) for q in loads[scale].queries]
        episode.close()
    variants = {tool: (tool, largest) for tool in TOOLS}
    variants |= {f"{tool}@{s}": (tool, s) for s in scales if s != largest for tool in SEARCH_TOOLS}
    errors: dict[str, str] = {}
    wall, cpu = Interleaved(), Interleaved()
    for order in rotations(list(variants), sizes["rounds"]):
        episodes = {s: _fresh(world, cache, s, loads[s], errors) for s in scales}
        for name in order:
            tool, scale = variants[name]
            walls, cpus = [], []
            for _ in range(sizes["batch"]):
                args = loads[scale].args(tool)
                c, start = time.process_time(), time.perf_counter()
                result = episodes[scale].call(tool, args)
                walls.append(time.perf_counter() - start)
                cpus.append(time.process_time() - c)
                if result.is_error:
                    errors.setdefault(name, result.error or "")
            wall.add_round(name, walls)
            cpu.add_round(name, cpus)
        for episode in episodes.values():
            episode.close()
    return _call_summary(variants, wall, cpu, errors, loads, sizes)


def _total(value: Any) -> int:
    return int(value["total"] if isinstance(value, dict) else value.total)


def _call_summary(
    variants: dict[str, tuple[str, str]],
    wall: Interleaved,
    cpu: Interleaved,
    errors: dict[str, str],
    loads: dict[str, Workload],
    sizes: dict[str, int],
) -> dict[str, Any]:
    cpu_summary = cpu.summary(NOOP)
    out: dict[str, Any] = {}
    for name, s in wall.summary(NOOP).items():
        tool, scale = variants[name]
        c = cpu_summary[name]
        out[name] = {"tool": tool, "scale": scale, **s, "cpu": c, "noop_calls": c["ratio_median"]}
        if name in errors:
            out[name]["error"] = errors[name][:300]
    queries = {
        scale: {
            "queries": load.queries,
            "matches": load.matches,
            "matches_median": median(load.matches),
        }
        for scale, load in loads.items()
    }
    for row in out.values():
        if row["tool"] in SEARCH_TOOLS:
            matched = queries[row["scale"]]["matches_median"]
            row["cpu_us_per_match"] = round(row["cpu"]["median_ms"] * 1e3 / matched, 3) if matched else None
    return {
        "variants": out,
        "queries": queries,
        "rounds": sizes["rounds"],
        "calls_per_round": sizes["batch"],
        "tools": TOOLS,
    }


def run(ctx: Context) -> dict[str, Any]:
    world = ctx.worlds.get("research")
    if world is None:
        ctx.skip("research", "all", "the research world did not load")
        return {}
    scales = ["small"] if ctx.quick else [s for s in ("small", "default", "large") if s in world.scales]
    scales += [s for s in ([] if ctx.quick else world.scales) if s not in scales]  # any scale added later
    cache, corpus, build = _templates(ctx, world, scales)
    largest = build["scale"]
    print(f"  research reset at {largest} ({build['documents']:,} documents)", flush=True)
    reset = _reset(ctx, cache, world, largest)
    print(f"  research tool calls ({', '.join(scales)})", flush=True)
    calls = _calls(ctx, world, cache, scales, largest)
    v = calls["variants"]
    search, read, noop = v["search"]["cpu"]["median_ms"], v[READ]["cpu"]["median_ms"], v[NOOP]["cpu"]["median_ms"]
    summary = {
        "scale": largest,
        "documents": build["documents"],
        "search_cpu_ms": search,
        "read_cpu_ms": read,
        "noop_cpu_ms": noop,
        "search_noop_calls": ratio(search, noop),
        "read_noop_calls": ratio(read, noop),
        "search_over_read": ratio(search, read),
        "search_minus_read_noop_calls": ratio(search - read, noop),
        "search_newest_noop_calls": ratio(v["search_newest"]["cpu"]["median_ms"], noop),
    }
    return {"corpus": corpus, "build": build, "reset": reset, "calls": calls, "summary": summary}
