"""The idle-episode store in one fresh process (run by benchmarks/targets.py as a subprocess, so
nothing else the suite did is in the baseline). Prints one JSON object.

    python benchmarks/idle_probe.py CACHE_DIR TOTAL ACTIVE

An `EpisodeManager` keeping ACTIVE episodes open hosts TOTAL live retail episodes (default scale);
each is used as an agent's episode is (a write and a read, through `manager.get`, as every MCP
call and control-plane route resolves it), so past ACTIVE the least recently used are parked.
Reports the RSS delta, the bytes parked episodes keep, what parking and rebuilding cost (CPU),
and checks that a rebuilt episode has the state hash it had when it was parked.
"""

from __future__ import annotations

import ctypes
import json
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.common import median, quiet_logs, rss_bytes, settle


def _trim() -> bool:
    """Give freed heap memory back to the system (glibc), so RSS shows what is in use."""
    try:
        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0))
    except OSError:
        return False


def main() -> None:
    cache_dir, total, active = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    quiet_logs()
    from mcpsim.engine import TemplateCache
    from mcpsim.serve import EpisodeManager

    manager = EpisodeManager(
        TemplateCache(cache_dir), max_episodes=total + 10, max_episode_bytes=None, ttl_seconds=None, max_active=active
    )
    warm = manager.create("retail")
    customers = [r["id"] for r in warm.query("SELECT id FROM customers ORDER BY id LIMIT 500")]
    orders = [r["id"] for r in warm.query("SELECT id FROM orders ORDER BY id LIMIT 500")]
    manager.delete(warm.id)
    settle()
    _trim()
    baseline = rss_bytes()

    def use(i: int, episode_id: str) -> None:
        manager.get(episode_id).call(
            "add_customer_address",
            {
                "customer_id": customers[i % len(customers)],
                "line1": f"{i} Idle Way",
                "city": "Springfield",
                "state": "CA",
                "zip": f"{10000 + i % 89999}",
            },
        )
        manager.get(episode_id).call("get_order_details", {"order_id": orders[i % len(orders)]})

    ids = []
    cpu0, start = time.process_time(), time.perf_counter()
    for i in range(total):
        episode = manager.create("retail")
        ids.append(episode.id)
        use(i, episode.id)
    fill_cpu = time.process_time() - cpu0
    fill_wall = time.perf_counter() - start
    settle()
    rss_raw = rss_bytes() - baseline
    trimmed = _trim()
    rss = rss_bytes() - baseline
    episodes = manager.list()
    parked = [e for e in episodes if e.parked]
    parked_bytes = [e.size_bytes for e in parked]

    # Park and rebuild, timed one by one (CPU), and the state hash across both.
    sample = ids[: min(200, len(ids))]
    park_cpu, rebuild_cpu, open_op_cpu, same_hash = [], [], [], 0
    for episode_id in sample:
        episode = manager.get(episode_id)
        before = episode.state_hash()  # rebuilds it if it was parked
        c = time.process_time()
        episode.state_hash()
        open_op_cpu.append(time.process_time() - c)
        c = time.process_time()
        ok = episode.park()
        park_cpu.append(time.process_time() - c)
        c = time.process_time()
        after = episode.state_hash()  # the rebuild, then the same operation
        rebuild_cpu.append(time.process_time() - c)
        same_hash += ok and before == after
    print(
        json.dumps(
            {
                "total": total,
                "active": active,
                "live": len(episodes),
                "parked": len(parked),
                "rss_delta_bytes": rss,
                "rss_delta_before_trim_bytes": rss_raw,
                "malloc_trim": trimmed,
                "per_episode_bytes": rss / max(1, total),
                "parked_bytes_median": median(parked_bytes) if parked_bytes else None,
                "parked_bytes_max": max(parked_bytes) if parked_bytes else None,
                "parks": manager.parks,
                "fill_cpu_s": round(fill_cpu, 2),
                "fill_wall_s": round(fill_wall, 2),
                "park_cpu_ms": round(median(park_cpu) * 1e3, 3),
                "rebuild_cpu_ms": round(median(rebuild_cpu) * 1e3 - median(open_op_cpu) * 1e3, 3),
                "state_hash_cpu_ms": round(median(open_op_cpu) * 1e3, 3),
                "same_hash": same_hash,
                "sampled": len(sample),
            }
        )
    )
    manager.close()


if __name__ == "__main__":
    main()
