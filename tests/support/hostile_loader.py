"""A world loader for `WorldHost`'s sandbox tests (issue 29, item 2): picklable, importable in the
sandbox's child, with one good world and hostile ones standing in for specs that compile forever,
spin, eat memory or fail."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from mcpsim.tasks import TaskSet
from mcpsim.world import World
from tests.support import toyworld


@dataclass(frozen=True)
class HostileLoader:
    folder: str  # where the loader leaves word of what it does, and the test its release

    def __call__(self, name: str) -> tuple[World, TaskSet]:
        marks = Path(self.folder)
        (marks / f"{name}.started").touch()
        if name == "held":  # compiles until the test releases it, then fails
            for _ in range(12_000):  # at most about 10 minutes
                if (marks / "release").exists():
                    raise ValueError("the spec's entity 'order' has no primary key")
                time.sleep(0.05)
        elif name == "stuck":  # never returns (past any wall-clock limit)
            time.sleep(3600)
        elif name == "spin":  # burns CPU without end
            while True:
                pass
        elif name == "hog":  # more memory than any sandbox allows
            hoard = [bytearray(256 * 1024**2) for _ in range(64)]
            return hoard  # type: ignore[return-value]
        return toyworld.world, TaskSet(world=toyworld.world.name, files=[])
