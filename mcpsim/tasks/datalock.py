"""The data a world's tasks were written against.

Tasks cite seeded data: a customer's email, an order's total, a birth date. If the data moves (a
Faker release that draws other names, a change to the seed code), the tasks silently stop
making sense. So each world's task folder holds `data.lock.json`: the state hash of every
template (seed, scale) its tasks use. A task episode is built only from a template whose hash
matches; otherwise task creation stops with a message saying what moved and how to re-derive.

    python -m mcpsim.tasks.datalock WORLD [WORLD ...]     # rewrite the lock after re-deriving the tasks
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

from mcpsim.engine import TemplateCache, connect, full_state_hash
from mcpsim.tasks._loading import load_tasks, task_folder
from mcpsim.world import World, load_world

LOCK_FILE = "data.lock.json"

_verified: set[tuple[str, str, int, str]] = set()
_guard = threading.Lock()


class StaleData(RuntimeError):
    """The world's data is not the data its tasks were written against."""


def lock_path(world_name: str) -> Path:
    return task_folder(world_name) / LOCK_FILE


def _key(seed: int, scale: str) -> str:
    return f"{seed}/{scale}"


def read_lock(world_name: str) -> dict[str, str] | None:
    """{"seed/scale": state hash}, or None when the world ships no lock (third-party worlds may not)."""
    try:
        path = lock_path(world_name)
    except LookupError:
        return None
    if not path.exists():
        return None
    templates: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))["templates"]
    return templates


def verify(world: World, seed: int, scale: str, data: bytes) -> None:
    """Raise StaleData unless the template `data` is what the world's tasks were written against
    (checked once per process per world version, seed and scale)."""
    marker = (world.name, world.version, seed, scale)
    if marker in _verified:
        return
    lock = read_lock(world.name)
    expected = lock.get(_key(seed, scale)) if lock is not None else None
    if expected is not None:
        conn = connect(data)
        try:
            actual = full_state_hash(conn, world.metadata)
        finally:
            conn.close()
        if actual != expected:
            import faker

            raise StaleData(
                f"world {world.name!r} at seed {seed}, scale {scale!r} builds data (hash {actual[:12]}) other than "
                f"the data its tasks were written against (hash {expected[:12]}, {LOCK_FILE}). Something that "
                f"generates the data changed: the seed code, or the Faker release (installed: {faker.VERSION}; "
                "mcpsim pins the one the tasks need). Reinstall mcpsim's pinned dependencies, or re-derive the "
                f"tasks and run `python -m mcpsim.tasks.datalock {world.name}`."
            )
    with _guard:
        _verified.add(marker)


def write_lock(world_name: str) -> Path:
    """Record the template hashes of every (seed, scale) the world's tasks use."""
    world, tasks = load_world(world_name), load_tasks(world_name)
    templates = TemplateCache(None)
    hashes = {}
    for seed, scale in sorted({(t.seed, t.scale) for t in tasks.tasks}):
        conn = connect(templates.get(world, seed, scale))
        hashes[_key(seed, scale)] = full_state_hash(conn, world.metadata)
        conn.close()
    path = lock_path(world_name)
    payload = {
        "comment": "state hashes of the templates this world's tasks were written against; "
        "regenerate with `python -m mcpsim.tasks.datalock WORLD` after re-deriving the tasks",
        "templates": hashes,
    }
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    for name in argv:
        print(f"wrote {write_lock(name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
