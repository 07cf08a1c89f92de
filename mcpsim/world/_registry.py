"""Finding worlds: every installed package can register one under the `mcpsim.worlds`
entry-point group (`name = "package.module:world"`). Nothing imports every world up front.
A world built at run time (compiled from a spec by `mcpsim.specs`) is added to this process's
registry with `register_world`, and is then found like an installed one."""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

from mcpsim.world._core import World

GROUP = "mcpsim.worlds"


class UnknownWorld(LookupError):
    def __init__(self, name: str) -> None:
        known = ", ".join(world_names()) or "none installed"
        super().__init__(f"unknown world {name!r} (known: {known})")
        self.name = name


_registered: dict[str, World] = {}


def world_registrations() -> list[dict[str, World]]:
    """The registry of worlds registered at run time, for code that puts it back as it was
    (`mcpsim.catalogue.worlds_registered_here_removed`)."""
    return [_registered]


def register_world(world: World) -> None:
    """Make `world` loadable by name in this process. A name an installed world has, or another
    registered world of another version has, is refused (ValueError)."""
    if world.name in {ep.name for ep in entry_points(group=GROUP)}:
        raise ValueError(f"world {world.name!r} is already installed; give the generated world another name")
    known = _registered.get(world.name)
    if known is not None and known.version != world.version:
        raise ValueError(f"another world named {world.name!r} is already registered in this process")
    _registered[world.name] = world


def world_names() -> list[str]:
    return sorted({ep.name for ep in entry_points(group=GROUP)} | set(_registered))


@cache
def load_world(name: str) -> World:
    if name in _registered:
        return _registered[name]
    for ep in entry_points(group=GROUP):
        if ep.name == name:
            world = ep.load()
            if not isinstance(world, World):
                raise TypeError(f"entry point {ep.value} is not an mcpsim World")
            return world
    raise UnknownWorld(name)
