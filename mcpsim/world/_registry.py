"""Finding worlds by name. Nothing imports every world up front. A name is looked up in this order:

1. worlds built at run time (compiled from a spec by `mcpsim.specs`) and added to this process's
   registry with `register_world`;
2. installed packages: each registers its world under the `mcpsim.worlds` entry-point group
   (`name = "package.module:world"`);
3. world folders, found without installing anything: every subfolder (named like a Python
   identifier, not starting with `_`, holding an `__init__.py` that exposes `world`) of the
   folders on the worlds path (`worlds_path`): those `MCPSIM_WORLDS_PATH` names (separated as
   PATH is), those added in this process (`searching_worlds_folder`), and, in a source checkout,
   the repository's own `worlds/`. A world's name is its folder's name; the first folder on the
   path that holds a name wins, and an installed or registered world of that name wins over it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path

from mcpsim.world._core import World

GROUP = "mcpsim.worlds"
WORLDS_PATH_ENV = "MCPSIM_WORLDS_PATH"
"""The environment variable naming folders whose subfolders are worlds (separated by os.pathsep)."""

_CHECKOUT_PACKAGE = "mcpsim_worlds"  # what a source checkout's worlds/ is installed as


class UnknownWorld(LookupError):
    def __init__(self, name: str) -> None:
        known = ", ".join(world_names()) or "none installed"
        super().__init__(f"unknown world {name!r} (known: {known})")
        self.name = name


_registered: dict[str, World] = {}
_searched: list[Path] = []  # folders added in this process (`searching_worlds_folder`)


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


def _checkout_worlds() -> Path | None:
    """The repository's `worlds/` when this `mcpsim` package is a source checkout's (the folder
    beside it holds `pyproject.toml` and `worlds/__init__.py`), else None."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "worlds" / "__init__.py").is_file():
        return root / "worlds"
    return None


_CHECKOUT = _checkout_worlds()


def worlds_path() -> list[Path]:
    """The folders whose subfolders are worlds, in the order they are searched: those
    `MCPSIM_WORLDS_PATH` names, those added in this process, then a source checkout's `worlds/`."""
    folders = [Path(p) for p in os.environ.get(WORLDS_PATH_ENV, "").split(os.pathsep) if p]
    folders += _searched
    if _CHECKOUT is not None:
        folders.append(_CHECKOUT)
    unique: dict[Path, None] = {}
    for folder in folders:
        unique.setdefault(folder.resolve(), None)
    return list(unique)


@contextmanager
def searching_worlds_folder(folder: str | Path) -> Iterator[None]:
    """Inside the block, the worlds in `folder`'s subfolders are found too (after the folders
    `MCPSIM_WORLDS_PATH` names); when it ends, `load_world`'s cache is cleared, so a world of that
    folder is not found any more."""
    _searched.append(Path(folder))
    try:
        yield
    finally:
        _searched.pop()
        load_world.cache_clear()


def _folder_worlds() -> dict[str, Path]:
    """Every world folder on the worlds path, by name (the first folder holding a name wins)."""
    found: dict[str, Path] = {}
    for folder in worlds_path():
        if not folder.is_dir():
            continue
        for child in sorted(folder.iterdir()):
            name = child.name
            if name.isidentifier() and not name.startswith("_") and (child / "__init__.py").is_file():
                found.setdefault(name, child)
    return found


def world_folder(name: str) -> Path | None:
    """The folder of the world `name` when it is found on the worlds path, not registered at run
    time nor installed; else None."""
    if name in _registered or any(ep.name == name for ep in entry_points(group=GROUP)):
        return None
    return _folder_worlds().get(name)


def world_names() -> list[str]:
    return sorted({ep.name for ep in entry_points(group=GROUP)} | set(_registered) | set(_folder_worlds()))


def _import_folder(name: str, folder: Path) -> object:
    """The package in `folder`: a source checkout's `worlds/<name>` as `mcpsim_worlds.<name>` where
    that package is importable from there, any other as the package `mcpsim_world_<name>`."""
    spec = importlib.util.find_spec(_CHECKOUT_PACKAGE)
    locations = spec.submodule_search_locations if spec is not None else None
    if locations and folder.parent.resolve() in {Path(p).resolve() for p in locations}:
        return importlib.import_module(f"{_CHECKOUT_PACKAGE}.{name}")
    module_name = f"mcpsim_world_{name}"
    known = sys.modules.get(module_name)
    if known is not None and [Path(p) for p in getattr(known, "__path__", [])] == [folder]:
        return known
    for stale in [m for m in sys.modules if m == module_name or m.startswith(f"{module_name}.")]:
        del sys.modules[stale]  # a world of that name from another folder, imported earlier in this process
    spec = importlib.util.spec_from_file_location(
        module_name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


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
    folder = _folder_worlds().get(name)
    if folder is None:
        raise UnknownWorld(name)
    world = getattr(_import_folder(name, folder), "world", None)
    if not isinstance(world, World):
        raise TypeError(f"{folder / '__init__.py'} has no mcpsim World named `world`")
    if world.name != name:
        raise ValueError(f"the folder {folder} holds the world {world.name!r}: a world folder is named after its world")
    return world
