"""Run in a subprocess by tests/worlds/test_determinism.py, possibly under a shifted wall clock: prints JSON
with the wall-clock date this process sees, the template hash of every world at every scale CI
builds, and the `mcpsim check` result of every world (--full-check), or all of it but the
cheating baselines (--check)."""

from __future__ import annotations

import json
import sys
from datetime import date

from mcpsim.audit._audit import check_world
from mcpsim.engine import _store as store
from mcpsim.engine._templates import TemplateCache
from mcpsim.world._registry import load_world, world_names

SCALES = ("small", "default")


def main() -> None:
    templates = TemplateCache(None)  # never the disk cache: every template is built here
    hashes = {}
    for name in world_names():
        world = load_world(name)
        for scale in SCALES:
            conn = store.connect(templates.get(world, 0, scale))
            hashes[f"{name}/{scale}"] = store.full_state_hash(conn, world.metadata)
            conn.close()
    checks = {}
    if "--check" in sys.argv or "--full-check" in sys.argv:
        for name in world_names():
            # --check: gold, do-nothing, alternatives and near misses (what a shifted clock could
            # move); --full-check adds the cheating battery, which reads no clock and so runs once,
            # unshifted (under libfaketime it would take several times as long)
            report = check_world(name, templates, baselines="--full-check" in sys.argv)
            checks[name] = [f"{t.task_id}: {p}" for t in report.tasks for p in t.problems] + report.problems
    print(json.dumps({"today": date.today().isoformat(), "hashes": hashes, "checks": checks}))


if __name__ == "__main__":
    main()
