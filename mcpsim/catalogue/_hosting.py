"""Spec worlds for the lazy world host (`mcpsim.serve._worlds`): the names of the spec files in a
folder, and a loader that compiles one spec, with its tasks, when the host first needs it. A folder
may mix world specs and twin specs (`python -m mcpsim.twins build`'s DIR/worlds): each is loaded as
`--worlds-dir` loads it, with the task file written beside it when there is one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mcpsim.catalogue._loading import compiled_file, spec_files
from mcpsim.specs import SpecError
from mcpsim.tasks import TaskSet
from mcpsim.twins import load_twin
from mcpsim.world import World


def spec_world_loader(folder: str | Path) -> tuple[list[str], SpecFolderLoader]:
    """The world names a folder offers, without compiling anything, and their loader. A world
    spec's name is its file's (`NAME.yaml`); a twin's is the `name` its file gives (its files are
    named after the server: `npm-...-memory.twin.json` holds `memory_server`). Two files naming one
    world are a SpecError."""
    paths: dict[str, Path] = {}
    for path in spec_files(folder):
        name = served_name(path)
        if name in paths:
            raise SpecError(f"{paths[name]} and {path} both hold world {name!r}; a folder serves a name once")
        paths[name] = path
    return sorted(paths), SpecFolderLoader(paths)


def served_name(path: Path) -> str:
    """The name a spec file's world is served under: a twin file's `name` (read within the twin's
    size bound), else the file's stem. A twin file that does not read keeps its stem, and loading
    it then says what is wrong with it."""
    if path.suffix == ".json":
        try:
            return load_twin(path).name
        except ValueError:  # a world spec in JSON, or a twin file that does not read
            pass
    return path.stem


class SpecFolderLoader:
    def __init__(self, paths: dict[str, Path]) -> None:
        self.paths = paths

    def __call__(self, name: str) -> tuple[World, TaskSet]:
        """The world with its tasks: its task file's, else generated as `--worlds-dir` does
        (`mcpsim.catalogue._loading`)."""
        world, tasks = self._load_file(name)
        return world, tasks()

    def world(self, name: str) -> World:
        """The world alone, for its tools (distractors): no tasks read or generated."""
        return self._load_file(name)[0]

    def _load_file(self, name: str) -> tuple[World, Callable[[], TaskSet]]:
        path = self.paths[name]
        world, tasks = compiled_file(path)
        if world.name != name:
            raise SpecError(f"{path}: the spec's name is {world.name!r}, not the name it is served under, {name!r}")
        return world, tasks
