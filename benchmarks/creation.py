"""Template builds (once per world and scale) and episode creation from a cached template, per
world and scale, interleaved with two baselines on the same bytes: a bare `deserialize`, and a
`deserialize` followed by the first query (which makes SQLite parse the schema)."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from benchmarks.common import Interleaved, rotations, timed
from benchmarks.context import Context


def _schema_stats(data: bytes) -> dict[str, Any]:
    conn = sqlite3.connect(":memory:")
    conn.deserialize(data)
    try:
        rows = conn.execute("SELECT type, count(*), coalesce(sum(length(sql)), 0) FROM sqlite_master GROUP BY type")
        by_type = {t: {"count": n, "sql_chars": chars} for t, n, chars in rows}
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    finally:
        conn.close()
    return {"schema": by_type, "page_size": page_size, "pages": pages, "free_pages": free}


def _deserialize(data: bytes, first_query: bool) -> float:
    start = time.perf_counter()
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    conn.deserialize(data)
    if first_query:
        conn.execute("SELECT value FROM _mcpsim_meta WHERE key = 'world'").fetchone()
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


def run(ctx: Context) -> dict[str, Any]:
    from mcpsim.engine import Episode, TemplateCache

    templates: list[dict[str, Any]] = []
    pairs: list[tuple[str, str]] = []
    for name, world in ctx.worlds.items():
        for scale in ctx.world_scales(world):
            print(f"  template {name}/{scale}", flush=True)
            fresh = TemplateCache(ctx.cache_dir)
            try:
                seconds, data = timed(lambda w=world, s=scale, c=fresh: c.get(w, 0, s))
            except Exception as exc:
                ctx.skip("creation", f"{name}/{scale}", f"template build failed: {type(exc).__name__}: {exc}"[:300])
                continue
            load_s, _ = timed(lambda w=world, s=scale: TemplateCache(ctx.cache_dir).get(w, 0, s))
            ctx.templates.get(world, 0, scale)  # the suite's shared cache (loads from disk)
            templates.append(
                {
                    "world": name,
                    "scale": scale,
                    "bytes": len(data),
                    "built": fresh.builds > 0,
                    "build_s": round(seconds, 3) if fresh.builds else None,
                    "disk_load_ms": round(load_s * 1e3, 3),
                    "world_version": world.version,
                    **_schema_stats(data),
                }
            )
            pairs.append((name, scale))

    data = Interleaved()
    labels: dict[str, tuple[str, str, str]] = {}
    variants: list[str] = []
    for name, scale in pairs:
        for kind in ("create", "deserialize", "deserialize+first_query"):
            label = f"{name}/{scale}/{kind}"
            labels[label] = (name, scale, kind)
            variants.append(label)
    rounds = 4 if ctx.quick else 10
    print(f"  episode creation: {len(pairs)} world/scale pairs x 3 variants, {rounds} rounds", flush=True)
    for order in rotations(variants, rounds):
        for label in order:
            name, scale, kind = labels[label]
            world = ctx.worlds[name]
            batch = 5 if ctx.quick else (10 if scale == "default" else 2)
            durations = []
            if kind == "create":
                for _ in range(batch):
                    start = time.perf_counter()
                    episode = Episode.create(world, 0, scale, templates=ctx.templates)
                    durations.append(time.perf_counter() - start)
                    episode.close()
            else:
                raw = ctx.templates.get(world, 0, scale)
                durations = [_deserialize(raw, kind != "deserialize") for _ in range(batch)]
            data.add_round(label, durations)
    summary = data.summary()
    creation = []
    for t in templates:
        key = f"{t['world']}/{t['scale']}"
        create = summary.get(f"{key}/create", {})
        raw = summary.get(f"{key}/deserialize", {})
        first = summary.get(f"{key}/deserialize+first_query", {})
        mb = t["bytes"] / 1e6
        creation.append(
            {
                "world": t["world"],
                "scale": t["scale"],
                "bytes": t["bytes"],
                "create": create,
                "deserialize": raw,
                "deserialize_first_query": first,
                "schema_parse_ms": round(first["median_ms"] - raw["median_ms"], 4) if first and raw else None,
                "create_ms_per_mb": round(create["median_ms"] / mb, 4) if create else None,
            }
        )
    return {"templates": templates, "creation": creation, "rounds": rounds}
