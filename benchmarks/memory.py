"""Resident memory per live episode: 100 and 1,000 episodes of the default scale in one fresh
process per world (and a few of the large scale in full mode), from the RSS delta."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.context import Context

PROBE = Path(__file__).with_name("memory_probe.py")


def _probe(ctx: Context, world: str, scale: str, counts: list[int]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(PROBE), world, scale, str(ctx.cache_dir), ",".join(map(str, counts))],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=str(ctx.scratch),
        env=dict(os.environ),
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[-500:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(ctx: Context) -> dict[str, Any]:
    plans: list[tuple[str, str, list[int]]] = []
    if ctx.quick:
        if "retail" in ctx.worlds:
            plans.append(("retail", "default", [100]))
    else:
        for name, world in ctx.worlds.items():
            size = len(ctx.templates.get(world, 0, "default"))
            # 1,000 episodes of a 9 MB world take 9 GB and half a minute: above 4 GB, measure 300
            plans.append((name, "default", [100, 1000] if size * 1000 < 4e9 else [100, 300]))
        for name, world in ctx.worlds.items():
            if "large" in world.scales:
                plans.append((name, "large", [5, 10]))  # 10 large episodes already take about 0.5 GB
    results = []
    for world, scale, counts in plans:
        print(f"  memory {world}/{scale}: {counts} episodes", flush=True)
        try:
            results.append(_probe(ctx, world, scale, counts))
        except Exception as exc:
            ctx.skip("memory", f"{world}/{scale}", f"{type(exc).__name__}: {exc}"[:300])
    return {
        "probes": results,
        "method": "RSS delta (/proc/self/status VmRSS) in a fresh process per world and scale, "
        "after gc, baseline taken once the template is loaded and 3 episodes were "
        "created and closed",
    }
