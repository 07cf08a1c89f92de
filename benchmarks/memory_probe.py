"""Resident memory of N live episodes in one fresh process (run by benchmarks/memory.py as a
subprocess, so nothing else the suite did is in the baseline). Prints one JSON object.

    python benchmarks/memory_probe.py WORLD SCALE CACHE_DIR 100,1000
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.common import quiet_logs, rss_bytes, settle


def main() -> None:
    world_name, scale, cache_dir, counts_text = sys.argv[1:5]
    counts = sorted(int(c) for c in counts_text.split(","))
    quiet_logs()
    from mcpsim.engine import Episode, TemplateCache
    from mcpsim.world import load_world

    world = load_world(world_name)
    templates = TemplateCache(cache_dir)
    data = templates.get(world, 0, scale)
    for _ in range(3):  # warm every code path (imports, caches) before the baseline
        Episode.create(world, 0, scale, templates=templates).close()
    settle()
    baseline = rss_bytes()
    episodes = []
    points = []
    start = time.perf_counter()
    for count in counts:
        while len(episodes) < count:
            episodes.append(Episode.create(world, 0, scale, id=f"m{len(episodes)}", templates=templates))
        settle()
        rss = rss_bytes()
        points.append(
            {
                "episodes": count,
                "rss_bytes": rss,
                "delta_bytes": rss - baseline,
                "per_episode_bytes": round((rss - baseline) / count),
            }
        )
    created_s = time.perf_counter() - start
    # Some of the same episodes once used: retail's get an order read and an address write
    # (a result long enough to grow the database), every world's a full read of its database (a
    # state hash, as grading does). What that adds: SQLite's page cache, a database grown past
    # its template, SQLAlchemy's compiled statements.
    n = min(len(episodes), 10)
    used = episodes[:n]
    steps = ["state hash"]
    if world_name == "retail":
        steps = ["get_order_details", "add_customer_address", "state hash"]
        order = used[0].query("SELECT id FROM orders ORDER BY id LIMIT 1")[0]["id"]
        customer = used[0].query("SELECT id FROM customers ORDER BY id LIMIT 1")[0]["id"]
    settle()
    before = rss_bytes()
    for episode in used:
        if world_name == "retail":
            episode.call("get_order_details", {"order_id": order})
            episode.call(
                "add_customer_address",
                {
                    "customer_id": customer,
                    "line1": "1 Memory Lane",
                    "city": "Springfield",
                    "state": "CA",
                    "zip": "94107",
                },
            )
        episode.state_hash()
    settle()
    extra = rss_bytes() - before
    touched = {"episodes": n, "steps": steps, "extra_bytes": extra, "extra_per_episode_bytes": round(extra / n)}
    print(
        json.dumps(
            {
                "world": world_name,
                "scale": scale,
                "template_bytes": len(data),
                "baseline_rss_bytes": baseline,
                "points": points,
                "after_use": touched,
                "create_s": round(created_s, 3),
            }
        )
    )
    for episode in episodes:
        episode.close()


if __name__ == "__main__":
    main()
