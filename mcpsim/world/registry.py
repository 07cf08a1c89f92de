"""Finding worlds: every installed package can register one under the `mcpsim.worlds`
entry-point group (`name = "package.module:world"`). Nothing imports every world up front."""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

from mcpsim.world import World

GROUP = "mcpsim.worlds"


class UnknownWorld(LookupError):
    def __init__(self, name: str) -> None:
        known = ", ".join(world_names()) or "none installed"
        super().__init__(f"unknown world {name!r} (known: {known})")
        self.name = name


def world_names() -> list[str]:
    return sorted({ep.name for ep in entry_points(group=GROUP)})


@cache
def load_world(name: str) -> World:
    for ep in entry_points(group=GROUP):
        if ep.name == name:
            world = ep.load()
            if not isinstance(world, World):
                raise TypeError(f"entry point {ep.value} is not an mcpsim World")
            return world
    raise UnknownWorld(name)
